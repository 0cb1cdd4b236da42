"""The browser step's callback listener on 127.0.0.1 (`loopback_sign_in`), driven by real HTTP requests,
and the handshake's clock standing still while a person signs in."""

from __future__ import annotations

import math
from pathlib import Path
from urllib.parse import urlencode

import anyio
import anyio.abc
import httpx2
import pytest

from oauth_helpers import HeadlessBrowser, OAuthServer, free_port
from toolbridge.errors import AuthenticationError
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import AuthorizationCodeResult, FileTokenStore, OAuth, loopback_sign_in

pytestmark = pytest.mark.anyio


def authorization_url(redirect_uri: str) -> str:
    query = urlencode({"response_type": "code", "redirect_uri": redirect_uri, "state": "s1"})
    return f"https://auth.example.com/authorize?{query}"


async def visit(url: str, answers: list[httpx2.Response]) -> None:
    async with httpx2.AsyncClient() as client:
        answers.append(await client.get(url))


async def test_the_redirect_brings_the_code_and_state_and_other_requests_are_turned_away() -> None:
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    answers: list[httpx2.Response] = []
    shown: list[tuple[str, str]] = []
    async with anyio.create_task_group() as group:

        async def show(server: str, url: str) -> None:
            shown.append((server, url))

            async def browse() -> None:  # a favicon first, then the redirect, as browsers do
                await visit(redirect.replace("/callback", "/favicon.ico"), answers)
                await visit(f"{redirect}?code=abc&state=s1&iss=https%3A%2F%2Fauth.example.com", answers)

            group.start_soon(browse)

        result = await loopback_sign_in(show)("remote", authorization_url(redirect))
    assert result == AuthorizationCodeResult(code="abc", state="s1", iss="https://auth.example.com")
    assert shown == [("remote", authorization_url(redirect))]
    assert [answer.status_code for answer in answers] == [404, 200]
    assert "Signed in to toolbridge" in answers[1].text


async def test_a_refused_sign_in_says_why() -> None:
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    answers: list[httpx2.Response] = []
    async with anyio.create_task_group() as group:

        def show(server: str, url: str) -> None:
            query = urlencode(
                {"error": "access_denied", "error_description": "The user said no", "state": "s1"}
            )
            group.start_soon(visit, f"{redirect}?{query}", answers)

        with pytest.raises(AuthenticationError) as caught:
            await loopback_sign_in(show)("remote", authorization_url(redirect))
    assert "refused the sign-in: The user said no" in str(caught.value)
    assert answers[0].status_code == 400


async def test_a_redirect_to_anywhere_but_this_machine_is_refused() -> None:
    def show(server: str, url: str) -> None:
        raise AssertionError("nothing is shown for an address toolbridge cannot listen on")

    with pytest.raises(AuthenticationError) as caught:
        await loopback_sign_in(show)("remote", authorization_url("https://app.example.com/callback"))
    assert "auth.redirect_uri" in str(caught.value)


async def test_a_person_may_take_longer_than_the_connect_timeout(
    oauth_server: OAuthServer, tmp_path: Path
) -> None:
    """No deadline runs while a person reads the consent page: nothing would cut them off, however long
    they take (the connect's clock starts again once they answer)."""
    browser = HeadlessBrowser()
    deadlines_while_asking: list[float] = []

    async def person(server: str, url: str) -> AuthorizationCodeResult:
        deadlines_while_asking.append(anyio.current_effective_deadline())
        return await browser(server, url)

    features = ClientFeatures(oauth=OAuth(tokens=FileTokenStore(tmp_path / "t.json"), sign_in=person))
    async with ServerConnection(oauth_server.config(connect_timeout=1.0), features=features) as server:
        result = await server.call_tool("whoami", {}, call_id="c1")
    assert "mcp:read" in result.text
    assert deadlines_while_asking == [math.inf]


async def test_a_callback_port_already_taken_says_what_to_do() -> None:
    async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as taken:
        port = taken.extra(anyio.abc.SocketAttribute.local_port)
        with pytest.raises(AuthenticationError) as caught:
            await loopback_sign_in(lambda server, url: None)(
                "remote", authorization_url(f"http://127.0.0.1:{port}/cb")
            )
    assert f"port {port} on 127.0.0.1" in str(caught.value)
    assert "toolbridge auth logout remote" in str(caught.value)
