"""The OAuth-protected test server (tests/servers/oauth_protected.py) in a child process, a headless
browser step that follows its authorization redirect, and what the OAuth tests do with them: sign in,
probe the server with a token, run the CLI against it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.shared.auth import AuthorizationCodeResult

from listening import start_listening_process
from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import FileTokenStore, OAuth, ServerTokenStorage, StoredLogin

SERVER_SCRIPT = Path(__file__).resolve().parent / "servers" / "oauth_protected.py"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class OAuthServer:
    port: int
    process: subprocess.Popen[bytes]
    transport: str = "streamable-http"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{'mcp' if self.transport == 'streamable-http' else 'sse'}"

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self, name: str = "secure", **options: Any) -> ServerConfig:
        return ServerConfig(name=name, transport=self.transport, url=self.url, **options)  # type: ignore[arg-type]

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """What the authorization server saw, oldest first (`kind`: only "register", "authorize" or "token")."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/test/events", timeout=10) as response:
            seen: list[dict[str, Any]] = json.loads(response.read())
        return [event for event in seen if kind is None or event["event"] == kind]

    def status_with(self, token: str) -> int:
        """The HTTP status of an MCP initialize sent with `token` (a direct probe: 200 or 401)."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        return httpx2.post(self.url, json=body, headers=headers, timeout=10).status_code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_oauth_server(*options: str) -> OAuthServer:
    """Start the server (with command-line `options`) and return once it answers."""
    command = [sys.executable, str(SERVER_SCRIPT), *options]
    process, port = start_listening_process(command, "the OAuth test server")
    return OAuthServer(port, process, "sse" if "sse" in options else "streamable-http")


@contextmanager
def running_oauth_server(*options: str) -> Iterator[OAuthServer]:
    """`start_oauth_server(*options)`, stopped on leaving."""
    server = start_oauth_server(*options)
    try:
        yield server
    finally:
        server.stop()


def cli_setup(tmp_path: Path, server: OAuthServer) -> tuple[Path, dict[str, str]]:
    """A config naming `server` as "secure", and an environment for the CLI with its own token file
    (`tmp_path/tokens.json`), no colours and no display to open a browser on."""
    config = tmp_path / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {"secure": {"url": server.url}}}))
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "TOOLBRIDGE_TOKENS": str(tmp_path / "tokens.json"),
    }
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "TOOLBRIDGE_CONFIG"):
        env.pop(name, None)
    return config, env


@dataclass
class HeadlessBrowser:
    """A `SignIn` that plays the browser: opens the authorization URL and reads the redirect's code and
    state without visiting the redirect URI. Records which server asked and the URLs it was given."""

    asked: list[tuple[str, str]] = field(default_factory=list)

    async def __call__(self, server: str, authorization_url: str) -> AuthorizationCodeResult:
        self.asked.append((server, authorization_url))
        async with httpx2.AsyncClient() as client:
            response = await client.get(authorization_url)
        assert response.status_code == 302, response.text
        query = {
            key: values[0] for key, values in parse_qs(urlparse(response.headers["location"]).query).items()
        }
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    def parameters(self, index: int = -1) -> dict[str, str]:
        """The query of the `index`th authorization URL."""
        return {key: values[0] for key, values in parse_qs(urlparse(self.asked[index][1]).query).items()}


async def signed_in(config: ServerConfig, store: FileTokenStore) -> StoredLogin:
    """Connect with a `HeadlessBrowser` to sign in (as `auth login` does, without the browser); the
    login kept in `store`."""
    features = ClientFeatures(oauth=OAuth(tokens=store, sign_in=HeadlessBrowser()))
    async with ServerConnection(config, features=features) as connection:
        await connection.connect()
    stored = await stored_login(config, store)
    assert stored is not None
    assert stored.tokens is not None
    return stored


async def stored_login(config: ServerConfig, store: FileTokenStore) -> StoredLogin | None:
    """The sign-in `store` keeps for `config` (under `login_key(config)`)."""
    return await ServerTokenStorage(config, store).login()
