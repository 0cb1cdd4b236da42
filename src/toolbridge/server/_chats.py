"""Chats at run time: one run at a time per chat, its events fanned out to every open event stream
(late joiners first get the run's events from its start), and approvals answered over HTTP.

Runs belong to the server's task group, not to the request that started them: a run goes on when the
page that started it is closed, and ends (written down as cancelled) when the server shuts down.
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolbridge.agent import (
    AgentEvent,
    AgentStream,
    ApprovalDecidedEvent,
    ApprovalRequest,
    ApprovalRequestedEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
)
from toolbridge.errors import ToolbridgeError
from toolbridge.server._access import Caller
from toolbridge.server._agents import AgentCatalog
from toolbridge.server._errors import ApiError, describe_failure
from toolbridge.server._limits import ChargingRecorder, UsageLimits
from toolbridge.server._opening import Opening
from toolbridge.server._settings import ServerSettings
from toolbridge.store import ChatNotFoundError, ChatSummary, RunRecorder, Store
from toolbridge.telemetry import active_event_stream, set_log_context
from toolbridge.types import Message, UserMessage

__all__ = ["ChatHub", "event_stream"]

logger = logging.getLogger(__name__)

_SUBSCRIBER_SLACK = 1000
"""Events a slow event stream may fall behind; past that it is closed (a reconnect replays the run)."""


_INTERRUPT_SECONDS = 10.0
"""How long interrupted runs get to write down what they completed before the server stops anyway."""


@dataclass
class _PendingApproval:
    answered: anyio.Event = field(default_factory=anyio.Event)
    approved: bool = False


RUNNING_CHAT: ContextVar[int | None] = ContextVar("toolbridge_running_chat", default=None)
"""The chat whose run the current task serves; a server's question asked during one of its calls goes
to that chat (the OpenAI endpoint's runs have none)."""


@dataclass
class _Channel:
    """One chat's live side."""

    run_id: str | None = None
    stream: AgentStream | None = None
    """The run in progress, to cancel it."""
    backlog: list[str] = field(default_factory=list)
    """The current run's events as sent, for streams that open while it runs."""
    subscribers: set[MemoryObjectSendStream[str]] = field(default_factory=set)
    approvals: dict[str, _PendingApproval] = field(default_factory=dict)
    calls: dict[str, str | None] = field(default_factory=dict)
    """The run's calls in flight: id -> server (which chat a server's question belongs to)."""

    def publish(self, data: str) -> None:
        self.backlog.append(data)
        for subscriber in list(self.subscribers):
            try:
                subscriber.send_nowait(data)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.subscribers.discard(subscriber)
                subscriber.close()

    def subscribe(self) -> tuple[MemoryObjectSendStream[str], MemoryObjectReceiveStream[str]]:
        send, receive = anyio.create_memory_object_stream[str](len(self.backlog) + _SUBSCRIBER_SLACK)
        for data in self.backlog:
            send.send_nowait(data)
        self.subscribers.add(send)
        return send, receive

    def pending(self, call_id: str) -> _PendingApproval:
        return self.approvals.setdefault(call_id, _PendingApproval())


class ChatHub:
    def __init__(
        self,
        catalog: AgentCatalog,
        store: Store,
        settings: ServerSettings,
        runs: TaskGroup,
        *,
        limits: UsageLimits | None = None,
    ) -> None:
        self._catalog = catalog
        self.limits = limits or UsageLimits(settings.limits, store)
        self._store = store
        self._settings = settings
        self._runs = runs
        self._channels: dict[int, _Channel] = {}
        self.calls_changed = anyio.Event()
        """Set (and replaced) when a chat's run starts a call."""

    def _channel(self, chat_id: int) -> _Channel:
        return self._channels.setdefault(chat_id, _Channel())

    def close_streams(self) -> None:
        """End every open event stream (the server is stopping): open pages must not hold up its exit."""
        for channel in self._channels.values():
            for subscriber in list(channel.subscribers):
                subscriber.close()

    def running(self) -> int:
        """How many chats' runs are in progress."""
        return sum(channel.run_id is not None for channel in self._channels.values())

    async def finish_runs(self, grace: float) -> None:
        """Let the runs in progress finish within `grace` seconds, then interrupt the rest the way a
        cancel does (what they completed stays stored) and wait for them to end (the server stops)."""
        if grace > 0 and self.running():
            logger.warning("waiting up to %.0f s for %d run(s) to finish", grace, self.running())
        with anyio.move_on_after(grace):
            await self._all_runs_ended()
        for chat_id, channel in self._channels.items():
            if channel.stream is not None:
                logger.warning(
                    "interrupting run %s of chat %d: the server is stopping", channel.run_id, chat_id
                )
                channel.stream.cancel()
        with anyio.move_on_after(_INTERRUPT_SECONDS):
            await self._all_runs_ended()

    async def _all_runs_ended(self) -> None:
        while self.running():
            await self.calls_changed.wait()  # also set when a run ends

    async def start_run(
        self, chat_id: int, opening: str | Opening, *, caller: Caller | None = None
    ) -> str | None:
        """Store the user's message and start the chat's agent on it; returns the run id. The run's
        tool calls are logged as the chat's user's; its tokens count against `caller`'s limits.

        An `Opening` (text, attachments, a server prompt's messages) may end with the assistant's
        turn: then its messages are stored and no run starts (None)."""
        if isinstance(opening, str):
            opening = Opening(prompt=opening)
        if opening.prompt is None:
            await self.get_chat(chat_id)
            await anyio.to_thread.run_sync(self._append, chat_id, opening.before)
            return None
        content = opening.prompt
        chat = await self.get_chat(chat_id)
        channel = self._channel(chat_id)
        if channel.run_id is not None:
            raise ApiError(
                409, f"chat {chat_id} is still answering (run {channel.run_id}); wait for its final event"
            )
        run_id = channel.run_id = uuid.uuid4().hex
        try:
            definition = await self._catalog.definition(chat.agent or "default", param="agent")
            try:
                model = await self._catalog.model_for(definition)
            except ToolbridgeError as error:
                raise ApiError(503, f"agent {definition.name!r} has no usable model: {error}") from error
            history = await anyio.to_thread.run_sync(self._store.get_history, chat_id)
            asked = UserMessage(content=content, attachments=opening.attachments)
            await anyio.to_thread.run_sync(self._append, chat_id, [*opening.before, asked])
            history = [*history, *opening.before]
        except BaseException:
            channel.run_id = None
            raise

        async def approve(request: ApprovalRequest) -> bool:
            return await self._wait_for_answer(channel, request)

        agent = self._catalog.agent(model, definition, approve=approve, cache_scope=f"chat {chat_id}")
        events = agent.stream(content, history=history, attachments=opening.attachments)
        channel.stream = events
        recorder = ChargingRecorder(
            self._store,
            self.limits,
            chat_id=chat_id,
            written=len(history) + 1,
            user_id=chat.user_id,
            user=caller.name if caller else None,
        )
        channel.backlog = []
        channel.publish(json.dumps({"type": "run_started", "run_id": run_id}))
        self._runs.start_soon(
            self._run, chat_id, channel, run_id, events, recorder, name=f"chat {chat_id} run {run_id}"
        )
        return run_id

    def _append(self, chat_id: int, messages: Sequence[Message]) -> None:
        for message in messages:
            self._store.append_message(chat_id, message)

    async def _run(
        self, chat_id: int, channel: _Channel, run_id: str, stream: AgentStream, recorder: RunRecorder
    ) -> None:
        RUNNING_CHAT.set(chat_id)  # this task's own context: the run's calls inherit it
        set_log_context(chat_id=str(chat_id), run_id=run_id)
        logger.info("run %s of chat %d started", run_id, chat_id)
        try:
            async with stream as events:
                async for event in events:
                    await recorder.observe(event)
                    if isinstance(event, ApprovalRequestedEvent):
                        channel.pending(event.call.id)  # before anyone can see the request
                    elif isinstance(event, ApprovalDecidedEvent):
                        channel.approvals.pop(event.call_id, None)
                    channel.publish(event.model_dump_json())
                    # After publishing: a server's question waits for its call's card to be shown.
                    self._track_call(channel, event)
        except Exception as error:
            logger.exception("run %s failed", run_id)
            message = describe_failure(error)
            channel.publish(json.dumps({"type": "run_error", "run_id": run_id, "message": message}))
        finally:
            result = stream.result
            logger.info("run %s ended: %s", run_id, result.stop_reason if result else "failed")
            channel.run_id = None
            channel.stream = None
            channel.backlog = []
            channel.approvals.clear()
            channel.calls.clear()
            self._calls_changed()

    async def _wait_for_answer(self, channel: _Channel, request: ApprovalRequest) -> bool:
        pending = channel.pending(request.call.id)
        with anyio.move_on_after(self._settings.approval_timeout):
            await pending.answered.wait()
        channel.approvals.pop(request.call.id, None)
        return pending.approved

    async def answer(self, chat_id: int, call_id: str, approved: bool) -> None:
        await self.get_chat(chat_id)
        pending = self._channel(chat_id).approvals.get(call_id)
        if pending is None or pending.answered.is_set():
            raise ApiError(404, f"no call {call_id!r} is waiting for approval in chat {chat_id}")
        pending.approved = approved
        pending.answered.set()

    def _track_call(self, channel: _Channel, event: AgentEvent) -> None:
        if isinstance(event, ToolCallStartedEvent):
            channel.calls[event.call.id] = event.server
            self._calls_changed()
        elif isinstance(event, ToolCallFinishedEvent):
            channel.calls.pop(event.call_id, None)

    def _calls_changed(self) -> None:
        self.calls_changed.set()
        self.calls_changed = anyio.Event()

    async def call_shown(self, chat_id: int, call_id: str) -> bool:
        """Wait until the chat's run has published the start of call `call_id` (the server may ask
        before the agent's event reaches the page); False when the run is over."""
        channel = self._channel(chat_id)
        while call_id not in channel.calls:
            if channel.run_id is None:
                return False
            await self.calls_changed.wait()
        return True

    def publish(self, chat_id: int, data: str) -> None:
        """Send an event of the server's own (not the agent's) to the chat's event streams."""
        self._channel(chat_id).publish(data)

    async def cancel(self, chat_id: int) -> None:
        """Stop the chat's run: its stream and running tools are cancelled, and it ends `cancelled`."""
        await self.get_chat(chat_id)
        stream = self._channel(chat_id).stream
        if stream is None:
            raise ApiError(404, f"chat {chat_id} has no run in progress to stop")
        stream.cancel()

    async def get_chat(self, chat_id: int) -> ChatSummary:
        try:
            return await anyio.to_thread.run_sync(self._store.get_chat, chat_id)
        except ChatNotFoundError:
            raise ApiError(404, f"no chat {chat_id}; list the chats with GET /api/chats") from None

    async def events(self, chat_id: int) -> AsyncIterator[str]:
        """The chat's events as SSE text, until the client leaves; comments keep an idle stream open."""
        await self.get_chat(chat_id)
        return event_stream(self._channel(chat_id), self._settings.keepalive_interval)


async def event_stream(channel: _Channel, keepalive: float) -> AsyncIterator[str]:
    send, receive = channel.subscribe()
    try:
        with active_event_stream():
            yield ": connected\n\n"
            while True:
                data: str | None = None
                with anyio.move_on_after(keepalive if math.isfinite(keepalive) else None):
                    try:
                        data = await receive.receive()
                    except anyio.EndOfStream:
                        return  # dropped for falling behind: the client reconnects and replays the run
                yield ": keep-alive\n\n" if data is None else f"data: {data}\n\n"
    finally:
        channel.subscribers.discard(send)
        send.close()
        receive.close()
