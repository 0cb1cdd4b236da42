"""Approvals of chat runs: asked where the run is, answered from any replica (a signal row reaches the
run's owner), and "allow for this chat", which lets the chat's later calls of a tool run without asking."""

from __future__ import annotations

import anyio

from toolbridge.agent import AgentDefinition, ApprovalRequest
from toolbridge.config.tool_rules import ToolRef
from toolbridge.runs.channels import Channel, LiveChats
from toolbridge.runs.ledger import RunLedger
from toolbridge.server._errors import ApiError
from toolbridge.store import ChatSummary, Store

__all__ = ["ChatApprovals"]


class ChatApprovals:
    def __init__(self, store: Store, ledger: RunLedger, live: LiveChats, *, timeout: float) -> None:
        self._store = store
        self._ledger = ledger
        self._live = live
        self._timeout = timeout
        """Seconds a call waits for its answer before it is declined."""

    async def allowing(self, chat_id: int, definition: AgentDefinition) -> AgentDefinition:
        """The agent's definition for a run of the chat: the tools allowed for the chat need no approval
        (their calls run without an approval card)."""
        allowed = await anyio.to_thread.run_sync(self._store.allowed_tools, chat_id)
        if not allowed:
            return definition
        policy = definition.approval
        rules = {**policy.tools, **dict.fromkeys(sorted(allowed), "never")}  # a name with its server wins
        return definition.model_copy(update={"approval": policy.model_copy(update={"tools": rules})})

    async def wait(self, chat_id: int, channel: Channel, request: ApprovalRequest) -> bool:
        """Whether the user approves `request` of the chat's run here (declined after the timeout)."""
        tool = _allowance_key(request)
        # Allowed earlier in this run: every allowance during it is answered here (another replica's
        # too, as a signal), so the channel knows them all. Its events say it was asked and approved.
        if tool in channel.allowed_tools:
            return True
        pending = channel.pending(request.call.id)
        with anyio.move_on_after(self._timeout):
            await pending.answered.wait()
        channel.approvals.pop(request.call.id, None)
        if pending.for_chat:
            channel.allowed_tools.add(tool)
            await anyio.to_thread.run_sync(self._store.allow_tool, chat_id, tool)
        return pending.approved

    async def answer(
        self, chat: ChatSummary, call_id: str, approved: bool, *, for_chat: bool = False
    ) -> None:
        """Answer a call waiting for approval in the chat's run, on whichever replica it runs; `for_chat`
        (with `approved`): its tool's later calls in this chat run without asking."""
        chat_id = chat.id
        channel = self._live.peek(chat_id)
        if channel.decide(call_id, approved, for_chat=for_chat):
            return
        missing = ApiError(404, f"no call {call_id!r} is waiting for approval in chat {chat_id}")
        if channel.run_id is not None:
            raise missing  # the run is here, and that call is not waiting
        run = await anyio.to_thread.run_sync(self._ledger.current, chat_id)
        if run is None or not await anyio.to_thread.run_sync(self._ledger.awaiting_approval, run.id, call_id):
            raise missing
        if not await anyio.to_thread.run_sync(
            self._ledger.signal,
            run.id,
            "deny" if not approved else "allow" if for_chat else "approve",
            call_id,
        ):
            raise missing


def _allowance_key(request: ApprovalRequest) -> str:
    """The tool as the chat's allowance names it: with its server (`files:delete`), the approval rule
    that beats every other one for that tool."""
    return ToolRef.of(request.tool).qualified_names[0]
