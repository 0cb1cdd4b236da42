"""Shared fixtures: real MCP servers (ours from tests/servers/, and the published ones) for any test.

- `anyio_backend`: async tests run on asyncio (`@pytest.mark.anyio`).
- `stdio_server`: a `ServerConfig` that runs one of our test servers over stdio.
- `http_server`: starts one of our test servers over streamable HTTP or SSE on a free 127.0.0.1 port,
  waits until it answers, and stops it after the test.
- `oauth_server`: tests/servers/oauth_protected.py with its own authorization server (`oauth_helpers`).
- `published_server`: a `ServerConfig` for a published server installed by scripts/install-test-servers.
- `wait_until_gone`: poll until a process has exited.
- `unused_port`: a free TCP port on 127.0.0.1.
- For the whole run, a warm parent that starts our test servers by forking (tests/servers/_fast_start.py),
  and the `slow` tests first, so the last minutes are not one long test on one worker.
- `away_from_the_user` (autouse, whole session): HOME, the XDG dirs and the working directory point into
  a temporary directory and every `TOOLBRIDGE_*` variable is unset, so no test (nor any process it
  starts) can read the user's config or write into the user's database (`TOOLBRIDGE_TEST_*`, naming
  test resources, stay).
"""

from __future__ import annotations

import _signal
import compileall
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from listening import start_listening_process
from oauth_helpers import OAuthServer, running_oauth_server
from server_paths import PUBLISHED_SERVERS, PublishedServer, test_server_path
from toolbridge.config.model import ServerConfig

# name -> (path of the entry point under .servers/, args)
_PUBLISHED: dict[str, tuple[str, list[str]]] = {
    "excel-mcp-server": ("excel-mcp-server/bin/excel-mcp-server", ["stdio"]),
    "mcp-server-time": ("mcp-server-time/bin/mcp-server-time", ["--local-timezone", "UTC"]),
    "server-everything": ("npm/node_modules/.bin/mcp-server-everything", ["stdio"]),
}


REPO = Path(__file__).resolve().parent.parent
FAST_START = REPO / "tests" / "servers" / "_fast_start.py"


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # one for the whole run, started by the controller (or by the only process without xdist)
    # The run starts hundreds of Python processes (toolbridge, its servers, snippets). Compiled once
    # here, they need not compile this source each: where PYTHONDONTWRITEBYTECODE is set, none of them
    # would keep what it compiled.
    for folder in (REPO / "src", REPO / "tests"):
        compileall.compile_dir(folder, quiet=1, workers=0)
    zygote = subprocess.Popen(
        [sys.executable, str(FAST_START)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    assert zygote.stdout is not None
    if zygote.stdout.readline().strip() != "ready":  # then every server starts the usual way
        zygote.kill()
        zygote.wait()
        return
    config.stash[_ZYGOTE] = zygote


def pytest_unconfigure(config: pytest.Config) -> None:
    zygote = config.stash.get(_ZYGOTE, None)
    if zygote is not None:
        zygote.terminate()
        zygote.wait(30)


_ZYGOTE = pytest.StashKey[subprocess.Popen[str]]()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow ones first


_REAL_HOME = Path.home()

# pytest-xdist's workers inherit COLUMNS=80, and rich's consoles keep a width found in the environment
# from the moment they are made (on import): each test sets the width it needs, or gets rich's default.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

_USER_DIRS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR")


def _is_user_setting(variable: str) -> bool:
    # TOOLBRIDGE_TEST_* name test resources (a test database), not the user's own.
    return variable.startswith("TOOLBRIDGE_") and not variable.startswith("TOOLBRIDGE_TEST_")


@pytest.fixture(scope="session", autouse=True)
def away_from_the_user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary HOME (with XDG dirs inside it) and working directory for the whole session."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        for name in _USER_DIRS:
            patch.setenv(name, str(home / name.lower()))
        for name in [name for name in os.environ if _is_user_setting(name)]:
            patch.delenv(name)
        patch.chdir(tmp_path_factory.mktemp("cwd"))
        yield home


@pytest.fixture(scope="session")
def real_home() -> Path:
    """The user's home directory, as it was before `away_from_the_user` moved it (for the test proving it)."""
    return _REAL_HOME


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


StdioServer = Callable[..., ServerConfig]


@pytest.fixture(scope="session")
def stdio_server() -> StdioServer:
    """`stdio_server("basic", name="basic", timeout=2)` -> a ServerConfig running tests/servers/basic.py."""

    def make(script: str, *, name: str | None = None, **options: Any) -> ServerConfig:
        return ServerConfig(
            name=name or script,
            transport="stdio",
            command=sys.executable,
            args=[test_server_path(script)],
            **options,
        )

    return make


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def unused_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (right now)."""
    return free_port()


@dataclass
class HttpServer:
    """One of our test servers running over HTTP in a child process."""

    script: str
    transport: str
    """`streamable-http` or `sse`."""
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        path = "/mcp" if self.transport == "streamable-http" else "/sse"
        return f"http://127.0.0.1:{self.port}{path}"

    def config(self, name: str | None = None, **options: Any) -> ServerConfig:
        return ServerConfig(name=name or self.script, transport=self.transport, url=self.url, **options)  # type: ignore[arg-type]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_http_server(
    script: str, transport: str, port: int | None = None, args: Sequence[str] = ()
) -> HttpServer:
    """Start tests/servers/<script>.py over `transport` (with more `args`; on `port`, else a free one) and
    return once it answers."""
    flag = {"streamable-http": "http", "sse": "sse"}[transport]
    command = [sys.executable, test_server_path(script), "--transport", flag, *args]
    process, port = start_listening_process(command, f"test server {script} ({transport})", port=port or 0)
    return HttpServer(script=script, transport=transport, port=port, process=process)


StartHttpServer = Callable[..., HttpServer]


@pytest.fixture
def http_server() -> Iterator[StartHttpServer]:
    """`http_server("basic", "sse")` -> a running `HttpServer`, stopped after the test."""
    started: list[HttpServer] = []

    def start(script: str, transport: str, port: int | None = None, args: Sequence[str] = ()) -> HttpServer:
        server = start_http_server(script, transport, port, args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def oauth_server() -> Iterator[OAuthServer]:
    """The OAuth-protected test server over streamable HTTP, stopped after the test."""
    with running_oauth_server() as server:
        yield server


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def basic_http_server(request: pytest.FixtureRequest) -> Iterator[HttpServer]:
    """tests/servers/basic.py over each HTTP transport, shared by a module's tests."""
    server = start_http_server("basic", request.param)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def published_server() -> PublishedServer:
    """`published_server("mcp-server-time")` -> its ServerConfig; fails if it is not installed."""

    def make(package: str, *, name: str | None = None, **options: Any) -> ServerConfig:
        entry, args = _PUBLISHED[package]
        command = PUBLISHED_SERVERS / entry
        if not os.access(command, os.X_OK):
            pytest.fail(
                f"The published MCP server {package!r} is not installed ({command} is missing). "
                "Run scripts/install-test-servers (it installs every published test server into .servers/)."
            )
        return ServerConfig(
            name=name or package, transport="stdio", command=str(command), args=args, **options
        )

    return make


@pytest.fixture(scope="session")
def wait_until_gone() -> Callable[..., bool]:
    """`wait_until_gone(pid)`: poll until that process has exited; False if it is still there after 10 s."""
    return _wait_until_gone


def process_is_gone(pid: int) -> bool:
    """Whether the process has exited (a zombie left to a non-reaping init counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return True
    return state == "Z"


def _wait_until_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not process_is_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield
    _restore_sigint(item, "its call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    _restore_sigint(item, "its teardown")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """A test run started in the background of a non-interactive shell (`.ci/run &`, nohup) has SIGINT
    ignored from the start, as bash ignores it for background jobs, and every process a test starts
    inherits that: the Ctrl-C tests would fail. Interrupting is what those tests are about, so it is
    restored for the whole run."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_SIGINT_IGNORED_AT: list[str] = []
"""Where Python code last set SIGINT to SIG_IGN in this process (to name the culprit in the warning)."""
_set_signal = _signal.signal


def _recording_signal(signum: Any, handler: Any) -> Any:
    if signum == signal.SIGINT and handler == signal.SIG_IGN:
        _SIGINT_IGNORED_AT[:] = ["".join(traceback.format_stack(limit=15)[:-1])]
    return _set_signal(signum, handler)


# `signal.signal` calls `_signal.signal` by its module attribute: this sees callers that took their own
# reference to `signal.signal` before this module was imported too.
_signal.signal = _recording_signal


def _restore_sigint(item: pytest.Item, where: str) -> None:
    """A test that leaves SIGINT ignored or blocked in the test process would pass that on to every
    process started after it (an ignored or blocked signal is inherited), and the Ctrl-C tests that follow
    on this worker would fail for it: restore it, and name the test that did it."""
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if blocked or ignored:
        state = "blocked" if blocked else "ignored"
        culprit = f"; set ignored at:\n{_SIGINT_IGNORED_AT[0]}" if ignored and _SIGINT_IGNORED_AT else ""
        item.warn(pytest.PytestWarning(f"{item.nodeid} left SIGINT {state} after {where}; restored{culprit}"))
