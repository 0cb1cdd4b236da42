"""The web page's "Sign in" for a server behind OAuth, in Chromium: the authorization server's page
opens in a new tab, its redirect reaches `toolbridge serve`'s callback on 127.0.0.1, and the server
card turns connected with its tools."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import WAIT_MS, serving
from playwright.sync_api import Page, expect
from server_helpers import serve_in_thread

from oauth_helpers import OAuthServer, start_oauth_server
from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow


@pytest.fixture
def oauth_server() -> Iterator[OAuthServer]:
    server = start_oauth_server()
    yield server
    server.stop()


def test_sign_in_from_the_servers_panel(
    tmp_path: Path, page: Page, oauth_server: OAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLBRIDGE_TOKENS", str(tmp_path / "tokens.json"))
    servers = {"mcpServers": {"secure": {"url": oauth_server.url}}}
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page, **servers) as url:
        page.goto(url)
        page.get_by_role("link", name="Servers").click()
        card = page.locator('[data-testid="server-card"][data-server="secure"]')
        expect(card.get_by_test_id("server-state")).to_have_text("failed")
        expect(card.get_by_test_id("server-error")).to_contain_text("needs you to sign in")

        with page.context.expect_page(timeout=WAIT_MS) as opened:
            card.get_by_role("button", name="Sign in").click()
        tab = opened.value
        expect(tab.locator("body")).to_contain_text("Signed in to toolbridge", timeout=WAIT_MS)

        expect(card.get_by_test_id("server-state")).to_have_text("connected", timeout=WAIT_MS)
        expect(card.get_by_role("button", name="Sign in")).to_have_count(0)
        card.get_by_text("tools").click()
        expect(card.locator('[data-tool="admin_report"]')).to_be_visible()
    assert [event["grant"] for event in oauth_server.events("token")] == ["authorization_code"]


def test_the_sign_in_api_refuses_what_cannot_sign_in(tmp_path: Path, oauth_server: OAuthServer) -> None:
    servers = {"local": {"command": "true"}, "secure": {"url": oauth_server.url}}
    with serve_in_thread(tmp_path, None, mcp_servers=servers) as server:
        http = server.http()
        unknown = http.post("/api/servers/nope/sign-in")
        assert unknown.status_code == 404
        assert "no MCP server named 'nope'" in unknown.json()["error"]["message"]
        local = http.post("/api/servers/local/sign-in")
        assert local.status_code == 400
        assert "does not sign in with OAuth" in local.json()["error"]["message"]
        assert http.get("/api/servers/secure/sign-in").status_code == 404  # none started yet
