"""The approval policy at the gateway: a call the agent's policy holds back is asked of the downstream
client's user through an elicitation form, refused, or run, as `gateway.approval` says.

On the 2025 revisions the form is a request of its own in the middle of the call. On 2026-07-28 the
call is answered with `input_required` carrying the form, and the client calls again with the user's
answer and the `requestState` it was given; that state is a one-time ticket for the same tool and
arguments, so an answer cannot be made up without the question having been asked.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.config.agents import ApprovalPolicy
from toolbridge.config.gateway import GatewayApproval
from toolbridge.tools import CallDeferred, refusals
from toolbridge.tools.approval import ApprovalRequest, Approver
from toolbridge.types import ToolSpec

__all__ = ["ApprovalGate"]

_ANSWER_KEY = "toolbridge_approval"
_KEPT_TICKETS = 256
"""Questions asked on 2026-07-28 and not answered yet; the oldest are forgotten past this."""
_NO_FIELDS: mcp.ElicitRequestedSchema = {"type": "object", "properties": {}}
_ELICITATION = mcp.ClientCapabilities(elicitation=mcp.ElicitationCapability())


@dataclass(frozen=True)
class _Ticket:
    tool: str
    arguments: str


class ApprovalGate:
    """The gateway's side of the call pipeline's approval step: which calls need approval (`policy`,
    None when `gateway.approval` is 'allow') and, per request, who is asked (`approver`)."""

    def __init__(self, policy: ApprovalPolicy, mode: GatewayApproval = "elicit") -> None:
        self.mode = mode
        self.policy = None if mode == "allow" else policy
        self._tickets: OrderedDict[str, _Ticket] = OrderedDict()

    def approver(self, ctx: ServerRequestContext[Any, Any], params: mcp.CallToolRequestParams) -> Approver:
        """Asks the client of this request about a call that needs approval. It returns the user's answer,
        raises `CallDeferred` with the `input_required` reply carrying the question (2026-07-28), or
        refuses (`refusals.unapproved`) when nobody can be asked."""

        async def approve(request: ApprovalRequest) -> bool:
            tool, reason = request.tool, request.reason
            # Refused in the same words as on every surface; docs/gateway.md says how to allow such calls
            # here (`gateway.approval`).
            if self.mode == "refuse" or not ctx.session.check_client_capability(_ELICITATION):
                raise refusals.unapproved(tool, reason)
            question = _question(tool, request.call.arguments, reason)
            if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
                answer = self._answer_given(params, tool)
                if answer is None:  # the client asks its user and calls again with the answer
                    raise CallDeferred(self._ask_in_result(question, tool, params))
            else:
                try:
                    answer = await ctx.session.elicit_form(
                        question, _NO_FIELDS, related_request_id=ctx.request_id
                    )
                except MCPError as exc:
                    why = f"{reason}; asking the client's user failed: {exc.error.message}"
                    raise refusals.unapproved(tool, why) from exc
            return answer.action == "accept"

        return approve

    def _ask_in_result(
        self, question: str, tool: ToolSpec, params: mcp.CallToolRequestParams
    ) -> mcp.InputRequiredResult:
        state = secrets.token_urlsafe(16)
        self._tickets[state] = _Ticket(tool.name, _canonical(params.arguments))
        while len(self._tickets) > _KEPT_TICKETS:
            self._tickets.popitem(last=False)
        form = mcp.ElicitRequestFormParams(message=question, requested_schema=_NO_FIELDS)
        return mcp.InputRequiredResult(
            input_requests={_ANSWER_KEY: mcp.ElicitRequest(params=form)}, request_state=state
        )

    def holds(self, request_state: str) -> bool:
        """Whether `request_state` is one this gateway gave with an approval question still open."""
        return request_state in self._tickets

    def _answer_given(self, params: mcp.CallToolRequestParams, tool: ToolSpec) -> mcp.ElicitResult | None:
        """The user's answer to a question this gateway asked about this very call; None if there is none."""
        ticket = self._tickets.pop(params.request_state, None) if params.request_state else None
        if ticket != _Ticket(tool.name, _canonical(params.arguments)):
            return None
        answer = (params.input_responses or {}).get(_ANSWER_KEY)
        return answer if isinstance(answer, mcp.ElicitResult) else None


def _question(tool: ToolSpec, arguments: dict[str, Any], reason: str) -> str:
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > 500:
        shown = shown[:500] + "…"
    server = f" on server {tool.source!r}" if tool.source else ""
    return f"Allow the call to {tool.name!r}{server} with {shown}? Asked because {reason}."


def _canonical(arguments: dict[str, Any] | None) -> str:
    return json.dumps(arguments or {}, sort_keys=True, default=str)
