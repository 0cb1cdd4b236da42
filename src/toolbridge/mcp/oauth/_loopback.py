"""The browser step with a local callback: listen on the redirect URI's loopback port, show the person
the authorization URL, and take the code and state from the one request the browser is sent back with.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import NamedTuple
from urllib.parse import parse_qs, urlparse

import anyio
import anyio.abc
import anyio.streams.stapled
from mcp.shared.auth import AuthorizationCodeResult

from toolbridge.errors import AuthenticationError
from toolbridge.mcp.oauth._provider import SignIn

__all__ = ["ShowUrl", "loopback_sign_in"]

ShowUrl = Callable[[str, str], Awaitable[None] | None]
"""(server name, authorization URL): open a browser there, or print it for the person to open."""

_PAGE = (
    "<!doctype html><meta charset=utf-8><title>toolbridge</title>"
    "<p style='font:16px sans-serif;margin:3em'>{message}</p>"
)
_MAX_REQUEST = 16 * 1024


def loopback_sign_in(show: ShowUrl) -> SignIn:
    """A `SignIn` for a person at this machine: `show` sends them to the URL; the redirect comes back
    to a listener on 127.0.0.1 at the redirect URI's port, open only until that one request arrives."""

    async def sign_in(server: str, authorization_url: str) -> AuthorizationCodeResult:
        redirect = _redirect_uri(server, authorization_url)
        try:
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=redirect.port or 80)
        except OSError as exc:
            raise AuthenticationError(
                f"Server {server!r}: the sign-in comes back to port {redirect.port} on 127.0.0.1, which cannot "
                f"be listened on ({exc.strerror or exc}). Stop what uses it, or run `toolbridge auth logout "
                f"{server}` so that the next sign-in registers another port.",
                server=server,
            ) from exc
        async with listener:
            shown = show(server, authorization_url)
            if inspect.isawaitable(shown):
                await shown
            while True:
                async with await _accept(listener) as client:
                    result = await _answer(server, client, redirect.path)
                    if result is not None:
                        return result

    return sign_in


def _redirect_uri(server: str, authorization_url: str) -> _Callback:
    query = parse_qs(urlparse(authorization_url).query)
    redirect = urlparse(query.get("redirect_uri", [""])[0])
    if redirect.scheme != "http" or redirect.hostname not in ("127.0.0.1", "localhost"):
        raise AuthenticationError(
            f"Server {server!r}: the sign-in redirects to {redirect.geturl() or 'no address'!r}, which is not "
            "a loopback address toolbridge can listen on. Set auth.redirect_uri to http://127.0.0.1:PORT/callback.",
            server=server,
        )
    return _Callback(redirect.port, redirect.path or "/")


class _Callback(NamedTuple):
    """Where the browser comes back to on this machine."""

    port: int | None
    path: str


async def _accept(listener: anyio.abc.Listener[anyio.abc.SocketStream]) -> anyio.abc.SocketStream:
    """The next connection (one at a time: the browser sends the redirect, maybe a favicon request)."""
    assert isinstance(listener, anyio.streams.stapled.MultiListener)
    socket_listener = listener.listeners[0]
    assert isinstance(socket_listener, anyio.abc.SocketListener)
    return await socket_listener.accept()


async def _answer(server: str, client: anyio.abc.SocketStream, path: str) -> AuthorizationCodeResult | None:
    """The code and state from a GET to the redirect path (None for other requests, e.g. a favicon)."""
    request = b""
    with anyio.move_on_after(30):
        while b"\r\n\r\n" not in request and len(request) < _MAX_REQUEST:
            try:
                request += await client.receive()
            except anyio.EndOfStream:
                break
    line = request.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    target = urlparse(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
    if target is None or target.path != path:
        await _reply(client, 404, "Not found.")
        return None
    query = {key: values[0] for key, values in parse_qs(target.query).items()}
    if "error" in query:
        await _reply(client, 400, "Sign-in was not completed. You can close this tab.")
        why = query.get("error_description") or query["error"]
        raise AuthenticationError(
            f"Server {server!r}: the authorization server refused the sign-in: {why}.", server=server
        )
    if "code" not in query:
        await _reply(client, 400, "This address expects the sign-in's redirect.")
        return None
    await _reply(client, 200, "Signed in to toolbridge. You can close this tab.")
    return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


async def _reply(client: anyio.abc.SocketStream, status: int, message: str) -> None:
    body = _PAGE.format(message=message).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await client.send(head.encode() + body)
