"""`toolbridge auth login|status|logout` and the sign-in on a server's first use in `chat`, through the
real CLI against a real OAuth authorization server on 127.0.0.1. The test plays the browser: it reads
the address the CLI prints and follows it, redirect and all, to the CLI's callback on 127.0.0.1."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cli.cli_helpers import TOOLBRIDGE, in_process, only
from oauth_helpers import OAuthServer, cli_setup

pytestmark = pytest.mark.slow

DEADLINE = 60.0


@pytest.fixture
def setup(tmp_path: Path, oauth_server: OAuthServer) -> tuple[Path, dict[str, str]]:
    """A config naming the protected server, and an environment with its own token file and no display."""
    return cli_setup(tmp_path, oauth_server)


def toolbridge(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return in_process(*args, env=only(env))


def follow_sign_in(url: str) -> httpx2.Response:
    """What a browser does: open the authorization address and follow its redirect to the callback."""
    return httpx2.get(url, follow_redirects=True, timeout=20)


def test_login_status_logout(
    setup: tuple[Path, dict[str, str]], oauth_server: OAuthServer, tmp_path: Path
) -> None:
    config, env = setup
    before = toolbridge(env, "auth", "status", "--config", str(config), "--json")
    assert before.returncode == 0, before.stderr
    assert [(row["server"], row["signed_in"]) for row in json.loads(before.stdout)] == [("secure", False)]
    assert (
        toolbridge(env, "auth", "--config", str(config), "--json").stdout == before.stdout
    )  # status, by default
    # Without a sign-in a non-interactive command says what to do.
    refused = toolbridge(env, "call", "whoami", "{}", "--server", "secure", "--config", str(config))
    assert refused.returncode == 1
    assert "toolbridge auth login secure" in refused.stderr

    login = subprocess.Popen(
        [*TOOLBRIDGE, "auth", "login", "secure", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert login.stderr is not None
        lines: list[str] = []
        while not (lines and lines[-1].startswith("http://")):
            line = login.stderr.readline()
            assert line, f"the CLI ended without printing a sign-in address: {''.join(lines)}"
            lines.append(line)
        assert "Open this address in a browser" in "".join(lines)  # no display: printed, not opened
        page = follow_sign_in(lines[-1].strip())
        assert page.status_code == 200
        assert "Signed in" in page.text
        out, err = login.communicate(timeout=DEADLINE)
    finally:
        login.kill() if login.poll() is None else None
    assert login.returncode == 0, err
    assert "Signed in to secure (scopes: mcp:read)" in out

    tokens = tmp_path / "tokens.json"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    (kept,) = json.loads(tokens.read_text()).values()  # one sign-in, under the server's name and URL
    access_token = kept["tokens"]["access_token"]
    status = toolbridge(env, "auth", "status", "--config", str(config), "--json")
    (row,) = json.loads(status.stdout)
    assert row["signed_in"]
    assert row["scope"] == "mcp:read"
    assert row["refreshable"]
    table = toolbridge(env, "auth", "status", "--config", str(config))
    assert "secure" in table.stdout
    assert "yes" in table.stdout

    # Every command uses the stored sign-in.
    called = toolbridge(env, "call", "whoami", "{}", "--server", "secure", "--config", str(config))
    assert called.returncode == 0, called.stderr
    assert "with scopes mcp:read" in called.stdout
    for output in (out, err, status.stdout, table.stdout, called.stdout, called.stderr):
        assert access_token not in output

    logout = toolbridge(env, "auth", "logout", "secure", "--config", str(config))
    assert logout.returncode == 0
    assert "Signed out of secure" in logout.stdout
    assert json.loads(tokens.read_text()) == {}
    after = toolbridge(env, "auth", "status", "--config", str(config), "--json")
    assert not json.loads(after.stdout)[0]["signed_in"]
    again = toolbridge(env, "auth", "logout", "secure", "--config", str(config))
    assert "secure was not signed in" in again.stdout


def test_login_refuses_a_stdio_server_and_an_unknown_one(tmp_path: Path) -> None:
    config = tmp_path / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {"local": {"command": "true"}}}))
    env = {**os.environ, "NO_COLOR": "1", "TOOLBRIDGE_TOKENS": str(tmp_path / "tokens.json")}
    local = toolbridge(env, "auth", "login", "local", "--config", str(config))
    assert local.returncode == 1
    assert "OAuth sign-in is for servers reached over HTTP" in local.stderr
    unknown = toolbridge(env, "auth", "login", "nope", "--config", str(config))
    assert unknown.returncode == 1
    assert "no MCP server named 'nope'" in unknown.stderr


def test_chat_signs_in_on_the_first_use_of_a_server(
    setup: tuple[Path, dict[str, str]], oauth_server: OAuthServer, tmp_path: Path
) -> None:
    config, env = setup
    terminal, child_side = pty.openpty()
    chat = subprocess.Popen(
        [*TOOLBRIDGE, "chat", "--model", "demo", "--config", str(config), "--db", str(tmp_path / "chat.db")],
        stdin=child_side,
        stdout=child_side,
        stderr=child_side,
        env={**env, "TERM": "dumb"},
        close_fds=True,
    )
    os.close(child_side)
    screen = Screen(terminal)
    try:
        url = screen.wait_for_line_starting("http://")
        assert "needs you to sign in" in screen.text
        assert follow_sign_in(url).status_code == 200
        screen.wait_for("you>")
        os.write(terminal, b"/tools\r")
        screen.wait_for("admin_report")
        os.write(terminal, b"/exit\r")
        assert chat.wait(timeout=DEADLINE) == 0
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        os.close(terminal)
    assert "unavailable" not in screen.text
    (kept,) = json.loads((tmp_path / "tokens.json").read_text()).values()
    assert kept["tokens"]["access_token"]


class Screen:
    """What the program wrote to its terminal so far, read as it comes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = ""

    def _read_more(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        assert left > 0, f"timed out; the terminal shows:\n{self.text}"
        ready, _, _ = select.select([self.fd], [], [], left)
        if ready:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                chunk = b""
            assert chunk, f"the program closed its terminal; it shows:\n{self.text}"
            self.text += chunk.decode(errors="replace").replace("\r\n", "\n")

    def wait_for(self, needle: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while needle not in self.text:
            self._read_more(deadline)

    def wait_for_line_starting(self, prefix: str) -> str:
        deadline = time.monotonic() + DEADLINE
        while True:
            for line in self.text.split("\n")[:-1]:  # whole lines only
                if line.strip().startswith(prefix):
                    return line.strip()
            self._read_more(deadline)


def test_login_to_a_server_that_needs_none_says_so(tmp_path: Path, http_server: Callable[..., Any]) -> None:
    basic = http_server("basic", "streamable-http")
    config = tmp_path / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {"open": {"url": basic.url}}}))
    env = {**os.environ, "NO_COLOR": "1", "TOOLBRIDGE_TOKENS": str(tmp_path / "tokens.json")}
    env.pop("DISPLAY", None)
    done = toolbridge(env, "auth", "login", "open", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "did not ask for a sign-in" in done.stdout
    assert not (tmp_path / "tokens.json").exists()
