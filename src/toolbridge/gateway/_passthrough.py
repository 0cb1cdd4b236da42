"""What the gateway passes on to an upstream server as its client's own (`Passthrough`): the client's
capabilities, so a server asks only what the client can answer (on 2026-07-28 each request says so);
and, to a 2026-07-28 client, the upstream server's `input_required` as the server gave it (its keys,
its `requestState`), with the client's next request (its answers, that state) sent on unchanged. The
server checks its own state; the gateway holds nothing between the rounds.

A client of the 2025 revisions cannot be asked in rounds: an upstream server's `input_required` is
answered by the gateway then, each question sent to the client as a request of its own (`_forward`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.mcp._sdk import PASSTHROUGH, InputRequiredRelayed, Passthrough

__all__ = ["answers_in_rounds", "passed_through", "passthrough_for"]

T = TypeVar("T")


def answers_in_rounds(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client speaks 2026-07-28, where a server's questions come back as `input_required`."""
    return ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS


def passthrough_for(
    ctx: ServerRequestContext[Any, Any],
    input_responses: mcp.InputResponses | None = None,
    request_state: str | None = None,
    *,
    relays: bool = True,
) -> Passthrough:
    """How the request of `ctx` goes upstream; `input_responses` and `request_state`: the client's
    answers to the upstream server's `input_required` (not those to the gateway's own questions).
    `relays`: on 2026-07-28, the server's `input_required` goes to the client (else the gateway
    answers it, asking the client in questions of its own)."""
    seeded = input_responses is not None or request_state is not None

    def relays_error(error: MCPError) -> bool:
        # Errors the client can act on: a capability it did not declare, answers or a state refused.
        return error.code == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY or (
            seeded and error.code == mcp.INVALID_PARAMS
        )

    in_rounds = relays and answers_in_rounds(ctx)
    return Passthrough(
        client_capabilities=ctx.session.client_capabilities,
        input_responses=input_responses if in_rounds else None,
        request_state=request_state if in_rounds else None,
        input_required=in_rounds,
        client_revision=ctx.session.protocol_version,
        relays_error=relays_error,
    )


async def passed_through(
    passthrough: Passthrough, request: Callable[[], Awaitable[T]]
) -> T | mcp.InputRequiredResult:
    """`request()` sent upstream as `passthrough` says: its result, or the server's `input_required`."""
    token = PASSTHROUGH.set(passthrough)
    try:
        return await request()
    except InputRequiredRelayed as asked:
        return asked.result
    finally:
        PASSTHROUGH.reset(token)
