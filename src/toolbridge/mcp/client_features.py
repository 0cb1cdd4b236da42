"""What toolbridge offers the servers it connects to, as their MCP client: answers to their requests
(sampling, elicitation, roots) and a place for their notifications (log messages).

One `ClientFeatures` is given to a `ServerPool` (or a `ServerConnection`) and reaches every session as
the SDK's client callbacks, each told which server is asking (and, through `asking_call()`, during
which tool call). A feature left None is not offered: the
capability is not declared, and the SDK answers such requests with its own "not supported" error.
Who answers (the agent's model, a person in the CLI or on the web page, nobody in the OpenAI endpoint)
is decided above this layer, by whoever builds the `ClientFeatures`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import mcp_types as mcp
from mcp.client.context import ClientRequestContext

from toolbridge.mcp.calls_in_flight import CallsInFlight
from toolbridge.mcp.oauth import OAuth

__all__ = [
    "NO_FEATURES",
    "ClientFeatures",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "LogHandler",
    "RootsProvider",
    "SamplingHandler",
    "session_callbacks",
]

SamplingHandler = Callable[
    [str, mcp.CreateMessageRequestParams],
    Awaitable[mcp.CreateMessageResult | mcp.CreateMessageResultWithTools | mcp.ErrorData],
]
"""(server name, request) -> the completion, or an error (declined, rate-limited, failed)."""

ElicitationHandler = Callable[[str, mcp.ElicitRequestParams], Awaitable[mcp.ElicitResult | mcp.ErrorData]]
"""(server name, request) -> accept (with content), decline or cancel."""

RootsProvider = Callable[[str], Sequence[mcp.Root] | Awaitable[Sequence[mcp.Root] | mcp.ErrorData]]
"""(server name) -> the roots that server may see (or, awaited, an error: the gateway asks its client)."""

LogHandler = Callable[[str, mcp.LoggingMessageNotificationParams], Awaitable[None]]
"""(server name, a `notifications/message`)."""

ElicitationCompleteHandler = Callable[[str, str], None]
"""(server name, elicitation id): a URL-mode elicitation was completed (`notifications/elicitation/complete`)."""


@dataclass(frozen=True)
class ClientFeatures:
    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    roots: RootsProvider | None = None
    on_log: LogHandler | None = None
    oauth: OAuth | None = field(default_factory=OAuth)
    """How HTTP servers that want OAuth are signed in to; by default with the stored tokens only.
    None: never (a server's 401 is an error)."""
    on_elicitation_complete: ElicitationCompleteHandler | None = None

    def filled_from(self, defaults: ClientFeatures) -> ClientFeatures:
        """These features, with what they leave None taken from `defaults`."""
        return replace(
            self,
            **{
                name: getattr(defaults, name)
                for name in ("sampling", "elicitation", "roots", "on_log", "on_elicitation_complete")
                if getattr(self, name) is None
            },
        )


NO_FEATURES = ClientFeatures()


def session_callbacks(
    features: ClientFeatures, server: str, calls: CallsInFlight | None = None
) -> dict[str, Any]:
    """The `ClientSession` keyword arguments that offer `features` to `server`; handlers of requests
    learn from `calls` (the session's calls in flight) which call asked."""
    calls = calls or CallsInFlight(server)
    callbacks: dict[str, Any] = {}
    if (sampling := features.sampling) is not None:

        async def sample(
            _context: ClientRequestContext, params: mcp.CreateMessageRequestParams
        ) -> mcp.CreateMessageResult | mcp.CreateMessageResultWithTools | mcp.ErrorData:
            with calls.answering():
                return await sampling(server, params)

        callbacks["sampling_callback"] = sample
        # The handlers give the request's tools to the model (or answer without them).
        callbacks["sampling_capabilities"] = mcp.SamplingCapability(tools=mcp.SamplingToolsCapability())
    if (elicitation := features.elicitation) is not None:

        async def elicit(
            _context: ClientRequestContext, params: mcp.ElicitRequestParams
        ) -> mcp.ElicitResult | mcp.ErrorData:
            if isinstance(params, mcp.ElicitRequestURLParams) and (problem := _unsafe_url(params.url)):
                # Refused here, before any surface (terminal, web page, gateway client) shows it as a link.
                return mcp.ErrorData(
                    code=mcp.INVALID_PARAMS,
                    message=f"URL elicitation refused: {problem}; toolbridge only shows and opens http "
                    "and https URLs, so ask the user to open an http(s) page instead.",
                )
            with calls.answering():
                return await elicitation(server, params)

        callbacks["elicitation_callback"] = elicit
    if (roots := features.roots) is not None:

        async def list_roots(_context: ClientRequestContext) -> mcp.ListRootsResult | mcp.ErrorData:
            with calls.answering():
                given = roots(server)
                listed = await given if inspect.isawaitable(given) else given
            if isinstance(listed, mcp.ErrorData):
                return listed
            return mcp.ListRootsResult(roots=list(listed))

        callbacks["list_roots_callback"] = list_roots
    if (on_log := features.on_log) is not None:

        async def log(params: mcp.LoggingMessageNotificationParams) -> None:
            await on_log(server, params)

        callbacks["logging_callback"] = log
        # On the 2026-07-28 revision a server logs only to requests that ask for it, at this level or above.
        callbacks["log_level"] = "debug"
    return callbacks


_SAFE_SCHEMES = ("http", "https")


def _unsafe_url(url: str) -> str | None:
    """Why `url` must not be shown as a link or opened (a `javascript:`, `file:` or `data:` URL, one
    without a host, spaces or control characters a browser would strip), or None for an http(s) URL."""
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        return "the URL contains spaces or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "the URL cannot be read"
    if not parts.scheme:
        return "it has no scheme"
    if parts.scheme.lower() not in _SAFE_SCHEMES:
        return f"its scheme is {parts.scheme[:20] + ':'!r}"
    if not host:
        return "it names no host"
    return None
