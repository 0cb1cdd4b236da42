"""The exception tree. Everything toolbridge raises derives from `ToolbridgeError`.

```
ToolbridgeError
├── ConfigError              a config file is missing, unreadable or invalid (names file, server, key)
├── ServerError              something went wrong with one MCP server (carries `server`)
│   ├── ServerStartError     the server could not be started or initialized (command, exit code, stderr)
│   │   └── AuthenticationError  it needs an OAuth sign-in that could not be done here, or that failed
│   ├── ServerTimeoutError   connect/initialize or a call took longer than its timeout
│   └── ConnectionLostError  the session died (process exited, stream closed, connection refused)
├── ToolError                a tool call was refused: it did not run (carries `tool`, `kind`, `server`)
│   ├── UnknownToolError     no tool by that name (carries close `suggestions`)
│   ├── ToolArgumentsError   the arguments do not match the tool's input schema
│   ├── ToolNotAllowedError  the tool exists but is not offered to this caller (agent rules, a token)
│   ├── ToolDeclinedError    it needs approval, and the user declined or nobody could be asked
│   └── ToolUnavailableError the server it names cannot be reached
├── ModelError               the model's API failed after the provider's retries (carries `model`,
│   │                        `kind`, and `status`, `code`, `headers` and `body` when it answered over HTTP)
│   └── ToolsNotSupportedError  the endpoint rejected function calling; prompt mode works instead
├── StoreError               the database could not be opened, migrated or used (`toolbridge.store`
│                            adds AgentNotFoundError, AgentExistsError, ChatNotFoundError below it)
├── MissingExtraError        a feature needs an optional dependency that is not installed; the message
│                            names the `pip install 'toolbridge[extra]'` line (carries `extra`)
└── UsageError               the Python API was called wrongly: a value it does not know (a schema
                             target, tool mode or call format), a function that cannot be a tool, a
                             duplicate tool name, a stream or pool used outside `async with`
```

Only bugs and user mistakes raise. Bad input to the public API raises `UsageError` (or a subclass of the
root that fits better, like `ConfigError`), never a bare `ValueError`, `TypeError` or `RuntimeError`;
the one exception is pydantic's `ValidationError` when one of our value types is built directly.

Errors a model can fix (unknown tool, bad arguments, a timeout, a server that is down) are turned into
error `ToolResult`s by the call pipeline (`toolbridge.tools.pipeline`), with an `error_kind` saying
which, so the model can read them; every refusal is a `ToolError` whose message is the same on every
surface (`toolbridge.tools.refusals` words them).
An exception from a user's approver ends the run and reaches the caller as itself. Every message says
what was wrong and what to do about it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from toolbridge.types import ToolErrorKind

__all__ = [
    "AuthenticationError",
    "ConfigError",
    "ConnectionLostError",
    "MissingExtraError",
    "ModelError",
    "ModelErrorKind",
    "ServerError",
    "ServerStartError",
    "ServerTimeoutError",
    "StoreError",
    "ToolArgumentsError",
    "ToolDeclinedError",
    "ToolError",
    "ToolNotAllowedError",
    "ToolUnavailableError",
    "ToolbridgeError",
    "ToolsNotSupportedError",
    "UnknownToolError",
    "UsageError",
]


class ToolbridgeError(Exception):
    """Root of every error toolbridge raises."""


class ConfigError(ToolbridgeError):
    """A configuration file or value is invalid. The message names the file, the server and the key."""

    def __init__(
        self, message: str, *, path: str | None = None, server: str | None = None, key: str | None = None
    ) -> None:
        self.path = path
        self.server = server
        self.key = key
        where = [part for part in (path, f"server {server!r}" if server else None, key) if part]
        super().__init__(f"{': '.join(where)}: {message}" if where else message)


class ServerError(ToolbridgeError):
    """A problem with one MCP server."""

    def __init__(self, message: str, *, server: str) -> None:
        self.server = server
        super().__init__(message)


class ServerStartError(ServerError):
    """The server process could not be started, or it did not complete the MCP handshake."""

    def __init__(
        self,
        message: str,
        *,
        server: str,
        command: str | None = None,
        exit_code: int | None = None,
        stderr_tail: str = "",
    ) -> None:
        self.command = command
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        super().__init__(message, server=server)


class AuthenticationError(ServerStartError):
    """The server wants an OAuth sign-in that nobody could give here (a non-interactive run), or the
    sign-in failed (refused, wrong state, the authorization server answered an error)."""


class ServerTimeoutError(ServerError):
    """Connecting, initializing or a tool call took longer than allowed."""

    def __init__(self, message: str, *, server: str, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(message, server=server)


class ConnectionLostError(ServerError):
    """The session to the server died: its process exited, or its stream or connection closed."""


class ToolError(ToolbridgeError):
    """A tool call was refused, so it did not run. `kind` is the `error_kind` its result gets; `server`
    the server it was meant for, when known."""

    kind: ClassVar[ToolErrorKind] = "server_error"

    def __init__(self, message: str, *, tool: str, server: str | None = None) -> None:
        self.tool = tool
        self.server = server
        super().__init__(message)


class UnknownToolError(ToolError):
    """No tool has that name. `suggestions` holds the closest existing names."""

    kind = "unknown_tool"

    def __init__(self, message: str, *, tool: str, suggestions: Sequence[str] = ()) -> None:
        self.suggestions = list(suggestions)
        super().__init__(message, tool=tool)


class ToolArgumentsError(ToolError):
    """The arguments do not match the tool's input schema."""

    kind = "invalid_arguments"


class ToolNotAllowedError(ToolError):
    """The tool exists, but this caller may not use it (an agent's tool rules, a gateway token's reach)."""

    kind = "not_allowed"


class ToolDeclinedError(ToolError):
    """The call needs approval, and the user declined it or nobody could be asked."""

    kind = "denied"


class ToolUnavailableError(ToolError):
    """The tool's server cannot be reached."""

    kind = "server_unavailable"


ModelErrorKind = Literal[
    "context_length_exceeded",
    "invalid_api_key",
    "permission_denied",
    "model_not_found",
    "rate_limit_exceeded",
    "invalid_request",
    "server_error",
    "unreachable",
    "timeout",
    "stream_error",
    "tools_not_supported",
]
"""What went wrong, whichever provider said it and however it worded it (OpenAI's codes where OpenAI
has one): a request too long for the model's context, a rejected key, access denied, no such model, a
rate limit or quota, another refused request, a failing server (5xx or an unexpected status), a server
that could not be reached or did not answer in time, a reply broken off with an error, tools refused."""


_KIND_OF_STATUS: dict[int, ModelErrorKind] = {
    400: "invalid_request",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "model_not_found",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit_exceeded",
}


class ModelError(ToolbridgeError):
    """The model's API failed (after the provider's own retries).

    An HTTP failure keeps its shape: `status`, the provider's error `code` (e.g. `rate_limit_exceeded`),
    the response `headers` (names in lower case) and the `body` as sent. All are None/empty when the
    server could not be reached. `kind` is the failure normalised across providers (`ModelErrorKind`):
    as given, else what the status says (a 4xx by its number, any other a `server_error`), else None."""

    def __init__(
        self,
        message: str,
        *,
        model: str,
        status: int | None = None,
        body: object = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
        kind: ModelErrorKind | None = None,
    ) -> None:
        self.model = model
        self.status = status
        self.body = body
        self.code = code
        if kind is None and status is not None:
            kind = _KIND_OF_STATUS.get(status, "server_error")
        self.kind: ModelErrorKind | None = kind
        self.headers = {name.lower(): value for name, value in (headers or {}).items()}
        super().__init__(message)

    @property
    def retry_after(self) -> float | None:
        """Seconds the provider asked to wait (`retry-after-ms` or `retry-after`), if it said."""
        if (millis := _number(self.headers.get("retry-after-ms"))) is not None:
            return millis / 1000
        # An HTTP date is also allowed in Retry-After; providers send seconds, and a date is ignored.
        return _number(self.headers.get("retry-after"))


class ToolsNotSupportedError(ModelError):
    """The endpoint rejected a request because it carried tools: use prompt mode for this model."""


class StoreError(ToolbridgeError):
    """The database could not be opened, migrated or used. The message names the database."""


class MissingExtraError(ToolbridgeError):
    """A feature needs an optional dependency that is not installed. Carries `extra` (the name in
    `toolbridge[extra]`), `feature` (what needed it) and `module` (what could not be imported);
    `toolbridge._extras.require` raises it."""

    def __init__(self, extra: str, feature: str, *, module: str) -> None:
        self.extra = extra
        self.feature = feature
        self.module = module
        super().__init__(
            f"{feature} needs the {extra!r} extra, which is not installed ({module} is missing). "
            f"Install it with: pip install 'toolbridge[{extra}]'"
        )


class UsageError(ToolbridgeError):
    """The public API was called wrongly. The message says what was wrong and what to pass instead."""


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and value >= 0 and math.isfinite(value) else None
