"""stdio: the server is a child process speaking JSON-RPC lines on its stdin and stdout."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerStartError
from toolbridge.mcp._sdk import STDIO_PARSE_FAILURE, drop_log_record
from toolbridge.mcp._stderr import EXIT_STATUS_MARKER, StderrLog
from toolbridge.mcp._transports._streams import TransportStreams

__all__ = ["open_stdio"]

# The SDK's stdio_client keeps the process object to itself, so nothing tells us how a server
# exited. On POSIX the server runs under a one-line shell that appends its exit status to stderr
# (the SDK still stops the whole process group, so the shell adds no orphan risk).
_RECORD_EXIT_STATUS = (
    f'"$@"; status=$?; printf "\\n%s %d\\n" "{EXIT_STATUS_MARKER}" "$status" >&2; exit "$status"'
)


# No traceback from the SDK for each stdout line it cannot parse: a server printing garbage in a loop
# would print one per line, and the session already logs each such line itself, rate-limited
# (`LiveSession`, `RateLimitedLog`).
drop_log_record(STDIO_PARSE_FAILURE)


@asynccontextmanager
async def open_stdio(
    config: ServerConfig, stderr: StderrLog | None, _auth: httpx2.Auth | None = None
) -> AsyncIterator[TransportStreams]:
    if not config.command:
        raise ServerStartError(
            f"Server {config.name!r} uses the stdio transport but has no 'command'. "
            "Set 'command' (and 'args') to the program that runs the server.",
            server=config.name,
        )
    command = _resolve_command(config)
    args = list(config.args)
    if sys.platform != "win32":
        command, args = "/bin/sh", ["-c", _RECORD_EXIT_STATUS, config.name, command, *args]
    params = StdioServerParameters(command=command, args=args, env=dict(config.env) or None, cwd=config.cwd)
    errlog = stderr.file if stderr is not None else sys.stderr
    async with stdio_client(params, errlog=errlog) as streams:
        yield streams


def _resolve_command(config: ServerConfig) -> str:
    """The executable to run, or a `ServerStartError` that says why it cannot run."""
    assert config.command
    command = config.command
    if os.sep in command or (os.altsep and os.altsep in command):
        path = command if os.path.isabs(command) else os.path.join(config.cwd or os.getcwd(), command)
        if not os.path.exists(path):
            raise _not_runnable(config, f"the command {command!r} does not exist")
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise _not_runnable(config, f"the command {command!r} is not an executable file")
        return path
    # The server sees PATH from its own env when the config sets one, else ours.
    search_path = config.env.get("PATH", os.environ.get("PATH", os.defpath))
    found = shutil.which(command, path=search_path)
    if found is None:
        raise _not_runnable(
            config,
            f"the command {command!r} was not found on PATH. Check that it is installed and that its "
            "directory is on PATH (or the server's env PATH), or give its absolute path",
        )
    return found


def _not_runnable(config: ServerConfig, why: str) -> ServerStartError:
    return ServerStartError(
        f"Server {config.name!r} could not be started: {why}. (command: {config.describe()})",
        server=config.name,
        command=config.describe(),
    )
