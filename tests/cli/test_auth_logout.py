"""`toolbridge auth status` and `auth logout` through the real CLI, against the real authorization server
of tests/servers/oauth_protected.py on 127.0.0.1: status shows the scopes and the expiry, logout revokes
the tokens at the server (RFC 7009) and removes them, and says on stderr when the server refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from cli.cli_helpers import in_process, only
from oauth_helpers import OAuthServer, cli_setup, running_oauth_server, signed_in
from toolbridge.mcp.oauth import FileTokenStore

pytestmark = pytest.mark.slow


def sign_in(server: OAuthServer, tokens: Path) -> str:
    """Sign in headless and return the access token."""
    login = anyio.run(signed_in, server.config(), FileTokenStore(tokens))
    assert login.tokens is not None
    return login.tokens.access_token


def toolbridge(tmp_path: Path, server: OAuthServer, *args: str) -> subprocess.CompletedProcess[str]:
    config, env = cli_setup(tmp_path, server)
    return in_process(*args, "--config", str(config), env=only(env))


def test_status_shows_scopes_and_expiry_and_logout_revokes_the_tokens(tmp_path: Path) -> None:
    with running_oauth_server("--token-ttl", "3600") as server:
        access_token = sign_in(server, tmp_path / "tokens.json")
        status = toolbridge(tmp_path, server, "auth", "status")
        assert status.returncode == 0, status.stderr
        [row] = [line for line in status.stdout.splitlines() if "secure" in line]
        assert "mcp:read" in row
        assert "in 60 min" in row or "in 59 min" in row
        assert server.status_with(access_token) == 200

        logout = toolbridge(tmp_path, server, "auth", "logout", "secure")

        assert logout.returncode == 0, logout.stderr
        assert logout.stderr == ""
        assert (
            f"Signed out of secure: its tokens were revoked at {server.issuer}/revoke and removed."
            in logout.stdout
        )
        assert [event["token_type"] for event in server.events("revoke")] == ["refresh_token", "access_token"]
        assert server.status_with(access_token) == 401
        assert "secure" not in json.loads((tmp_path / "tokens.json").read_text())
        for output in (status.stdout, logout.stdout):
            assert access_token not in output


def test_a_refused_revocation_is_named_on_stderr_and_the_tokens_are_removed_anyway(tmp_path: Path) -> None:
    with running_oauth_server("--revocation-fails") as server:
        access_token = sign_in(server, tmp_path / "tokens.json")

        logout = toolbridge(tmp_path, server, "auth", "logout", "secure")

        assert logout.returncode == 0
        assert "Signed out of secure: its tokens were removed." in logout.stdout
        assert "revoking the refresh token failed" in logout.stderr
        assert "answered 503 (temporarily_unavailable)" in logout.stderr
        assert "may stay valid at the server until they expire" in logout.stderr
        assert access_token not in logout.stderr
        assert "secure" not in json.loads((tmp_path / "tokens.json").read_text())
        assert server.status_with(access_token) == 200  # the server never revoked it
