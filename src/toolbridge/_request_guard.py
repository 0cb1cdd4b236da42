"""The checks in front of every HTTP request to the server and to the gateway, as ASGI middleware, in
this order:

1. `Host` must name this service (loopback names, the bound address or `allowed_hosts`, with the port):
   a page on another site that re-points its DNS name at 127.0.0.1 (DNS rebinding) sends its own name as
   Host and is refused (`RequestGuard`, with `Origin`). A request with more than one `Host` is a 400:
   parts in front of the service may read another of them than the one checked here.
2. `Origin`, when a browser sends one, must be this service: other sites' pages cannot call it.
3. Who is asking, checked by each service: the gateway in `RequestGuard.admit` (`gateway._guard`), the
   server in a middleware of its own between the two guards (`server._access`). A caller without a key
   is refused before a byte of the body is read.
4. Bodies larger than `max_body_bytes` are refused (413), by Content-Length or as they arrive
   (`BodyLimit`). The body is read whole before the app sees it (the bodies allowed are small), so the
   refusal is a clean 413 whatever the app would have done with a body cut short.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOPBACK_NAMES", "BodyLimit", "GuardedService", "RequestGuard", "accepted_hosts", "is_loopback"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")

Refuse = Callable[[int, str], ASGIApp]
"""Builds the answer to a refused request from its status and message, in the service's own format."""


@dataclass(frozen=True)
class GuardedService:
    """What the refusals name, so that they say what to do: the service, the address to use instead and
    the config section where `allowed_hosts` and `max_body_bytes` are set."""

    name: str
    url: str
    config_section: str


class RequestGuard:
    """Host and Origin; then `admit`, where a service may check who is asking before passing the request on."""

    def __init__(self, app: ASGIApp, *, hosts: set[str], service: GuardedService, refuse: Refuse) -> None:
        """`hosts`: the accepted `Host` values, lowercase and with the port (`accepted_hosts`)."""
        self.app = app
        self.hosts = hosts
        self.origins = {f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")}
        self.service = service
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if len(headers.getlist("host")) > 1:
            await self.refuse(400, "the request has more than one Host header; send exactly one")(
                scope, receive, send
            )
            return
        refusal = self._refusal(headers)
        if refusal is not None:
            await self.refuse(403, refusal)(scope, receive, send)
            return
        await self.admit(scope, headers, receive, send)

    async def admit(self, scope: Scope, headers: Headers, receive: Receive, send: Send) -> None:
        """A request whose Host and Origin passed, on to the app (nothing of its body read yet)."""
        await self.app(scope, receive, send)

    def _refusal(self, headers: Headers) -> str | None:
        service = self.service
        host = headers.get("host", "").lower()
        if host not in self.hosts:
            return (
                f"Host {host or '(none)'!r} is not this {service.name}'s; use {service.url} "
                f"or add the name to {service.config_section}.allowed_hosts in the config"
            )
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return f"requests from pages at {origin} are not allowed by this {service.name}"
        return None


class BodyLimit:
    """Bodies within `max_body_bytes`, read whole before the app sees them; 413 for larger ones. Placed
    after the check of who is asking, so that nobody without a key can make the service read a body."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, service: GuardedService, refuse: Refuse) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.service = service
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        declared_too_large = length is not None and length.isdigit() and int(length) > self.max_body_bytes
        body = None if declared_too_large else await _body_within_limit(receive, self.max_body_bytes)
        if body is None:
            await self.refuse(413, self._too_large())(scope, receive, send)
            return
        await self.app(scope, body, send)

    def _too_large(self) -> str:
        return (
            f"the request body is larger than {self.max_body_bytes:,} bytes; send less "
            f"(the limit is {self.service.config_section}.max_body_bytes in the config)"
        )


async def _body_within_limit(receive: Receive, limit: int) -> Receive | None:
    """The request's body read whole, replayed to the app (and then the client's later messages, such as
    its disconnect); None if it is larger than `limit`."""
    received: list[Message] = []
    size = 0
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            break

    async def replay() -> Message:
        return received.pop(0) if received else await receive()

    return replay


def accepted_hosts(host: str, port: int, allowed_hosts: Iterable[str]) -> set[str]:
    """`Host` header values accepted by a service bound to `host:port`: loopback names, the bound address
    (unless it is every address) and `allowed_hosts`, each with the port (and without it on port 80)."""
    names = {*LOOPBACK_NAMES, *allowed_hosts}
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host}]" if ":" in host else host)
    accepted = {f"{name}:{port}".lower() for name in names}
    if port == 80:
        accepted |= {name.lower() for name in names}
    return accepted


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only (`localhost` or a loopback address, bracketed or not)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
