"""What went wrong with a server, in words that say what to do: start failures, deaths, lost calls.

Third-party exceptions (SDK, httpx2, OS) are translated here into toolbridge's error tree.
"""

from __future__ import annotations

import math
import re
import signal

import httpx2
from mcp import MCPError
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND

from toolbridge._exception_groups import leaf_errors
from toolbridge.config.model import ServerConfig
from toolbridge.errors import AuthenticationError, ServerError, ServerStartError, ServerTimeoutError
from toolbridge.mcp._invalid_reply import INVALID_REPLY
from toolbridge.mcp._stderr import StderrLog
from toolbridge.mcp._transports._http_status import AUTH_STATUSES, auth_required_message

__all__ = [
    "backing_off",
    "call_lost_message",
    "call_timed_out_message",
    "connect_timed_out",
    "end_of_session",
    "start_failure",
]


def start_failure(config: ServerConfig, exc: BaseException, stderr: StderrLog | None) -> ServerError:
    """The error for a server whose transport or MCP handshake failed before the session was usable."""
    if isinstance(exc, ServerError):
        return exc
    if (signing_in := _oauth_failure(config, exc)) is not None:
        return signing_in
    cause = _most_telling(exc)
    exit_code = stderr.exit_code() if stderr is not None else None
    tail = stderr.tail() if stderr is not None else ""
    if isinstance(cause, MCPError) and cause.code == CONNECTION_CLOSED and config.transport == "stdio":
        what = (
            f"exited {_exit_description(exit_code)} before completing the MCP handshake"
            if exit_code is not None
            else "closed its stdout before completing the MCP handshake"
        )
        hint = "Run the command by hand to see why it stops, and check its args, env and cwd."
    elif isinstance(cause, httpx2.ConnectError):
        what = f"could not be reached at {config.url} ({cause or 'connection refused'})"
        hint = "Check that the server is running and that the URL (host, port, path) is right."
    elif isinstance(cause, httpx2.HTTPStatusError) and cause.response.status_code in AUTH_STATUSES:
        return ServerStartError(
            f"Server {config.name!r} could not be used: "
            f"{auth_required_message(cause.response.status_code, str(cause.request.url))}",
            server=config.name,
            command=config.describe(),
        )
    elif isinstance(cause, httpx2.HTTPStatusError):
        what = f"answered HTTP {cause.response.status_code} at {config.url}"
        hint = _http_hint(config)
    elif isinstance(cause, MCPError) and cause.code == METHOD_NOT_FOUND and config.transport != "stdio":
        what = f"answered 'not found' to the MCP handshake at {config.url}"
        hint = _http_hint(config)
    elif isinstance(cause, MCPError) and cause.error.data == INVALID_REPLY:
        what = f"sent an invalid reply to the MCP handshake: {cause.error.message}"
        hint = "This is a bug in the server: report it to its authors."
    elif isinstance(cause, MCPError):
        what = f"rejected the MCP handshake: {cause.error.message} (JSON-RPC error {cause.code})"
        hint = "Check that the server speaks MCP on this transport."
    elif isinstance(cause, OSError):
        what = f"could not be started: {cause}"
        hint = "Check the command, its permissions and the working directory."
    else:
        what = f"failed while starting: {type(cause).__name__}: {cause}"
        hint = "Check the server's configuration and its stderr."
    message = f"Server {config.name!r} {what}. {hint}{_stderr_section(tail)}\n(command: {config.describe()})"
    return ServerStartError(
        message, server=config.name, command=config.describe(), exit_code=exit_code, stderr_tail=tail
    )


def backing_off(config: ServerConfig, last: ServerError, failures: int, wait: float) -> ServerStartError:
    """The error for a use of a server that keeps failing to start, while toolbridge waits to retry it."""
    seconds = max(1, math.ceil(wait))
    return ServerStartError(
        f"Server {config.name!r} failed to start {failures} times in a row, so toolbridge waits before "
        f"starting it again: the next attempt is on the first use in {seconds} s or later. "
        f"Fix what the last failure says meanwhile.\nLast failure: {last}",
        server=config.name,
        command=config.describe(),
        exit_code=getattr(last, "exit_code", None),
        stderr_tail=getattr(last, "stderr_tail", ""),
    )


def connect_timed_out(config: ServerConfig, stderr: StderrLog | None) -> ServerTimeoutError:
    tail = stderr.tail() if stderr is not None else ""
    limit = config.connect_timeout
    return ServerTimeoutError(
        f"Server {config.name!r} did not complete the MCP handshake within {limit:g} s and was stopped. "
        "Check that it is an MCP server on this transport and that it starts quickly enough; raise "
        f"'connect_timeout' in its config if it is just slow.{_stderr_section(tail)}"
        f"\n(command: {config.describe()})",
        server=config.name,
        timeout=limit,
    )


def end_of_session(config: ServerConfig, stderr: StderrLog | None) -> str:
    """Why a session that was working has ended, e.g. "the server exited with code 1"."""
    exit_code = stderr.exit_code() if stderr is not None else None
    if config.transport != "stdio":
        return f"the connection to {config.url} was closed"
    if exit_code is None:
        return "the server closed its stdout"
    tail = stderr.tail(5) if stderr is not None else ""
    return f"the server exited {_exit_description(exit_code)}{_stderr_section(tail)}"


def call_timed_out_message(
    server: str, tool: str, timeout: float, *, resets_on_progress: bool = False
) -> str:
    silence = "answer or report progress" if resets_on_progress else "answer"
    return (
        f"Tool {tool!r} on server {server!r} timed out: it did not {silence} within {timeout:g} s, so the "
        "call was cancelled at the server. Try again with a longer timeout or a smaller task, or tell the user "
        "the tool did not answer in time."
    )


def call_lost_message(
    server: str, tool: str, why: str, *, restart_error: ServerError | None, resent: bool = False
) -> str:
    if resent:
        return (
            f"The connection to server {server!r} was lost during the call to {tool!r} ({why}), "
            "again after a restart and one resend. The call may or may not have run; the server seems "
            "to fail on this call, so do not repeat it as is."
        )
    if restart_error is None:
        after = "The server was restarted, but the call may or may not have run"
    else:
        after = f"Restarting the server failed ({restart_error}), and the call may or may not have run"
    return (
        f"The connection to server {server!r} was lost during the call to {tool!r} ({why}). {after}: "
        "check whether its effect happened before calling it again."
    )


def _oauth_failure(config: ServerConfig, exc: BaseException) -> AuthenticationError | None:
    """A sign-in that could not be done or failed, as the error that says so (None if it was not that)."""
    for leaf in leaf_errors(exc):
        if isinstance(leaf, AuthenticationError):
            return leaf
        refused = re.match(r"Registration failed: (4\d\d)", str(leaf))
        if isinstance(leaf, OAuthRegistrationError) and refused:
            # No OAuth to sign in with, or none open to new clients: only credentials from the config help.
            return AuthenticationError(
                f"Server {config.name!r} answered HTTP 401 (authentication required) at {config.url}, and "
                f"toolbridge could not register there as an OAuth client (HTTP {refused[1]}). Give the server "
                'its credentials in \'headers\' (like "Authorization": "Bearer ${TOKEN}"), or a client '
                "registered by hand in 'auth' (client_id, client_secret).",
                server=config.name,
                command=config.describe(),
            )
        if isinstance(leaf, OAuthFlowError):
            return AuthenticationError(
                f"Server {config.name!r}: signing in with OAuth failed: {leaf}. Check the server's 'auth' "
                f"settings, or run `toolbridge auth login {config.name}` to sign in again.",
                server=config.name,
                command=config.describe(),
            )
    return None


def _most_telling(exc: BaseException) -> BaseException:
    """The leaf of an exception group that best explains it (transport errors beat the cancellations)."""
    leaves = leaf_errors(exc)
    for kind in (httpx2.HTTPError, OSError, MCPError):
        for leaf in leaves:
            if isinstance(leaf, kind):
                return leaf
    return leaves[0] if leaves else exc


def _exit_description(exit_code: int) -> str:
    # The launching shell reports death by signal N as 128 + N.
    try:
        killed_by = signal.Signals(exit_code - 128).name if exit_code > 128 else None
    except ValueError:
        killed_by = None
    return f"with code {exit_code} (killed by {killed_by})" if killed_by else f"with code {exit_code}"


def _http_hint(config: ServerConfig) -> str:
    if config.sse_fallback:  # no `type`: both transports were tried, so the path is what is wrong
        return (
            "Check the URL path (usually /mcp for streamable HTTP, /sse for the older SSE transport: "
            "with no 'type' configured both were tried) and any auth headers."
        )
    path = "/mcp" if config.transport == "streamable-http" else "/sse"
    return (
        f"Check the URL path (usually {path} for {config.transport}), that the transport is right, "
        "and any auth headers."
    )


def _stderr_section(tail: str) -> str:
    if not tail:
        return ""
    indented = "\n".join(f"  {line}" for line in tail.splitlines())
    return f"\nLast lines of its stderr:\n{indented}"
