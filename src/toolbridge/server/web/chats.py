"""Chats at run time: one run at a time per chat, its events fanned out to every open event stream
(late joiners first get the run's events from its start), and approvals answered over HTTP.

Runs belong to the server's task group, not to the request that started them: a run goes on when the
page that started it is closed, and ends (written down as interrupted) when the server shuts down.

Any number of replicas on one database act as one: a run is a row owned by the replica running it
(`toolbridge.runs.ledger`), its events are rows every replica's streams read (`toolbridge.runs.feed`), and an
approval, a cancel or the answer to a server's question (`asks`) that reaches another replica becomes
a signal row its owner acts on (`toolbridge.runs.keeper`). A run whose replica died while a tool ran as
a task is taken over by another, which follows the task and continues the run (`toolbridge.runs.takeover`).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextvars import ContextVar
from datetime import UTC, datetime

import anyio
from anyio.abc import TaskGroup

from toolbridge.agent import (
    Agent,
    AgentDefinition,
    AgentStream,
    ApprovalDecidedEvent,
    ApprovalRequest,
    ApprovalRequestedEvent,
    FinalEvent,
    MessageAddedEvent,
)
from toolbridge.agent.transcript import well_formed
from toolbridge.errors import ToolbridgeError
from toolbridge.mcp.tasks import TaskHandle, record_tasks
from toolbridge.models import Model
from toolbridge.runs.channels import Channel, LiveChats
from toolbridge.runs.feed import Follower, follow_events
from toolbridge.runs.keeper import RunKeeper
from toolbridge.runs.ledger import (
    INTERRUPTED_MESSAGE,
    RunConflictError,
    RunLedger,
    RunSignal,
    RunStatus,
)
from toolbridge.runs.notifier import RunNotifier
from toolbridge.runs.recorder import RunRecorder
from toolbridge.runs.resume import ResumeError, resume_turn
from toolbridge.runs.takeover import TakenRun, TaskStarts
from toolbridge.runs.writer import EventWriter
from toolbridge.server._access import Caller
from toolbridge.server._agents import AgentCatalog
from toolbridge.server._errors import ApiError, describe_failure
from toolbridge.server._limits import RUN_HOLD, UsageLimits
from toolbridge.server._metering import RUN_METER, MeteredModel, RunMeter
from toolbridge.server._settings import ServerSettings
from toolbridge.server.web.approvals import ChatApprovals
from toolbridge.server.web.opening import Opening
from toolbridge.store import ChatNotFoundError, ChatSummary, Store, StoreError
from toolbridge.telemetry import set_log_context
from toolbridge.types import AssistantMessage, Message, UserMessage

__all__ = ["ChatHub"]

logger = logging.getLogger(__name__)

_LISTEN_TIMEOUT = 10.0
"""How long a starting server waits to hear other replicas before serving anyway (it hears them later)."""


Start = Callable[[], Awaitable[tuple[AgentStream, RunRecorder, RunMeter]]]
"""What a run runs: its agent's stream (built once the run is under way: a run taken over follows its
tasks first), the recorder of its messages and the meter its tokens are charged to (closed when it ends)."""

_INTERRUPT_SECONDS = 10.0
"""How long interrupted runs get to write down what they completed before the server stops anyway."""


RUNNING_CHAT: ContextVar[int | None] = ContextVar("toolbridge_running_chat", default=None)
"""The chat whose run the current task serves; a server's question asked during one of its calls goes
to that chat (the OpenAI endpoint's runs have none)."""


def _replica_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


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
        self._ledger = RunLedger.of(store)
        self._settings = settings
        self._runs = runs
        self.live = LiveChats()
        """The chats this replica holds live state for."""
        self.approvals = ChatApprovals(store, self._ledger, self.live, timeout=settings.approval_timeout)
        self.replica = _replica_name()
        """This process among the replicas sharing the database."""
        self._notifier = RunNotifier(store.url, self._ledger.channel)
        self._notifier.add(self.live.heard)
        self._keeper = RunKeeper(
            self._ledger, self._notifier, self, replica=self.replica, lease=settings.run_lease
        )

    async def start(self) -> None:
        """Hear other replicas and keep leases from now on (in the server's task group)."""
        if not self._ledger.shared:
            # SQLite serves one process: a run still `running` is one a killed server left behind. One
            # waiting for a task goes on here; the others end interrupted.
            ever, lease = datetime.max.replace(tzinfo=UTC), self._settings.run_lease
            taken = await anyio.to_thread.run_sync(
                lambda: self._ledger.take_over_tasks(self.replica, lease=lease, now=ever)
            )
            mine = {run.run_id for run in taken}  # their new leases end before `ever`, too
            await anyio.to_thread.run_sync(lambda: self._ledger.reap(ever, sparing=mine))
            for run in taken:
                self.take_over(run)
        self._runs.start_soon(self._notifier.run, name="hearing other replicas")
        self._runs.start_soon(self._keeper.run, name="run leases")
        with anyio.move_on_after(_LISTEN_TIMEOUT):
            await self._notifier.listening.wait()
        if not self._notifier.listening.is_set():
            logger.warning("not hearing other replicas yet: their runs' events reach this one late")

    # -- OwnedRuns, for the keeper -------------------------------------------------------------------

    def owned_runs(self) -> list[str]:
        return self.live.owned_runs()

    def apply_signal(self, signal: RunSignal) -> None:
        self.live.apply_signal(signal)

    def run_lost(self, run_id: str) -> None:
        self.live.run_lost(run_id)

    def take_over(self, taken: TakenRun) -> None:
        channel = self.live.open(taken.chat_id)
        if channel.run_id is not None:
            if channel.lost and channel.run_id == taken.run_id:  # back from a stall, it stops: then resume
                self._runs.start_soon(self._take_over_once_stopped, taken)
            return  # else still running here (this replica's lease had lapsed): it goes on
        run_id = channel.run_id = taken.run_id
        channel.claimed = True
        channel.tasks.extend(taken.tasks)  # handed over again should this replica stall in turn
        channel.writer = EventWriter(
            self._ledger, run_id, taken.chat_id, channel.deliver, replica=self.replica
        )

        async def start() -> tuple[AgentStream, RunRecorder, RunMeter]:
            return await self._resume(taken, channel)

        self._runs.start_soon(
            self._run, taken.chat_id, channel, run_id, start, name=f"chat {taken.chat_id} run {run_id}"
        )

    async def _take_over_once_stopped(self, taken: TakenRun) -> None:
        while self.live.peek(taken.chat_id).run_id == taken.run_id:
            await self.live.calls_changed.wait()  # also set when a run ends
        self.take_over(taken)

    # -- the server's life ----------------------------------------------------------------------------

    async def finish_runs(self, grace: float) -> None:
        """Let the runs in progress finish within `grace` seconds, then interrupt the rest (what they
        completed stays stored; they end `interrupted`) and wait for them to end (the server stops)."""
        if grace > 0 and self.live.running():
            logger.warning("waiting up to %.0f s for %d run(s) to finish", grace, self.live.running())
        with anyio.move_on_after(grace):
            await self._all_runs_ended()
        for chat_id, channel in self.live.items():
            if channel.stream is not None:
                logger.warning(
                    "interrupting run %s of chat %d: the server is stopping", channel.run_id, chat_id
                )
                channel.interrupting = True
                channel.stream.cancel()
        with anyio.move_on_after(_INTERRUPT_SECONDS):
            await self._all_runs_ended()

    async def _all_runs_ended(self) -> None:
        while self.live.running():
            await self.live.calls_changed.wait()  # also set when a run ends

    # -- runs -----------------------------------------------------------------------------------------

    async def start_run(self, chat: ChatSummary, opening: str | Opening, *, caller: Caller) -> str | None:
        """Store the user's message and start the chat's agent on it; returns the run id. The run's
        tool calls are logged as the chat's user's; its tokens count against `caller`'s limits.

        An `Opening` (text, attachments, a server prompt's messages) may end with the assistant's
        turn: then its messages are stored and no run starts (None)."""
        if isinstance(opening, str):
            opening = Opening(prompt=opening)
        chat_id = chat.id
        if opening.prompt is None:
            await anyio.to_thread.run_sync(self._append, chat_id, opening.before)
            return None
        meter = await RunMeter.open(self.limits, caller.name, caller.user_id, hold=RUN_HOLD)
        try:
            return await self._start_run(chat, opening, opening.prompt, meter)
        except BaseException:
            await meter.close()
            raise

    async def _start_run(self, chat: ChatSummary, opening: Opening, content: str, meter: RunMeter) -> str:
        """Start the chat's run, which closes `meter` when it ends."""
        chat_id = chat.id
        channel = self.live.open(chat_id)
        while channel.ending:
            logger.debug("chat %d: the next run waits for run %s's last events", chat_id, channel.run_id)
            await self.live.calls_changed.wait()  # set once they are written (`_run_over`)
            channel = self.live.open(chat_id)
        if channel.run_id is not None:
            raise ApiError(409, str(RunConflictError(chat_id, channel.run_id)))
        run_id = channel.run_id = uuid.uuid4().hex
        try:
            definition, model, history = await self._set_up(chat, channel, run_id, opening, content)
        except BaseException as error:
            channel.run_over()
            self.live.release(chat_id, channel)
            if isinstance(error, RunConflictError):
                raise ApiError(409, str(error)) from None
            # Also when cancelled during the claim: its transaction may have committed all the same.
            with anyio.CancelScope(shield=True):
                await self._discard(run_id)
            raise

        agent = self._agent(chat, channel, definition, model, meter)
        events = agent.stream(content, history=history, attachments=opening.attachments)
        recorder = RunRecorder(
            self._store,
            chat_id=chat_id,
            written=len(history) + 1,
            model=model.name,
            run_of=(run_id, self.replica),
        )

        async def start() -> tuple[AgentStream, RunRecorder, RunMeter]:
            return events, recorder, meter

        channel.writer = EventWriter(self._ledger, run_id, chat_id, channel.deliver, replica=self.replica)
        channel.publish(json.dumps({"type": "run_started", "run_id": run_id, "model": model.name}))
        self._runs.start_soon(self._run, chat_id, channel, run_id, start, name=f"chat {chat_id} run {run_id}")
        return run_id

    def _agent(
        self, chat: ChatSummary, channel: Channel, definition: AgentDefinition, model: Model, meter: RunMeter
    ) -> Agent:
        """The agent of one run of the chat: its approvals wait in `channel`, its tokens go to `meter`."""

        async def approve(request: ApprovalRequest) -> bool:
            return await self.approvals.wait(chat.id, channel, request)

        return self._catalog.agent(
            MeteredModel(model, meter),
            definition,
            approve=approve,
            cache_scope=f"chat {chat.id}",
            chat_id=chat.id,
            user_id=chat.user_id,
        )

    async def _resume(self, taken: TakenRun, channel: Channel) -> tuple[AgentStream, RunRecorder, RunMeter]:
        """A taken-over run's start: follow its tasks to their ends, store their results, and continue
        the agent's turn from the stored history. Raises `ResumeError` when a task's server is gone."""
        chat_id = taken.chat_id
        chat = await anyio.to_thread.run_sync(self._store.get_chat, chat_id)
        meter = await self._meter_of(chat)
        try:
            definition = await self._catalog.definition(chat.agent or "default", param="agent")
            definition = await self.approvals.allowing(chat_id, definition)
            model = await self._catalog.model_for(definition, chosen=chat.model)
            pool = self._catalog.calls.registry.pool
            history = await resume_turn(self._store, pool, definition, taken, channel)
        except BaseException:
            await meter.close()
            raise
        stream = self._agent(chat, channel, definition, model, meter).stream(
            None, history=well_formed(history)
        )
        recorder = RunRecorder(
            self._store,
            chat_id=chat_id,
            written=len(history),
            model=model.name,
            run_of=(taken.run_id, self.replica),
        )
        return stream, recorder, meter

    async def _meter_of(self, chat: ChatSummary) -> RunMeter:
        """The account of a taken-over run: its chat's user's, as the run's start was (what the replica
        that died held for it lapses on its own); a 429 when their day is used up."""
        if chat.user_id is None:
            return RunMeter()
        user_id = chat.user_id
        name = await anyio.to_thread.run_sync(self._store.users.name_of, user_id)
        return await RunMeter.open(self.limits, name, user_id, hold=RUN_HOLD)

    async def _set_up(
        self, chat: ChatSummary, channel: Channel, run_id: str, opening: Opening, content: str
    ) -> tuple[AgentDefinition, Model, list[Message]]:
        """Claim the run, find its agent and model and store the user's message; the history it answers."""
        # The database decides between replicas: one running run per chat.
        await anyio.to_thread.run_sync(
            lambda: self._ledger.claim(run_id, chat.id, replica=self.replica, lease=self._settings.run_lease)
        )
        channel.claimed = True
        definition = await self._catalog.definition(chat.agent or "default", param="agent")
        definition = await self.approvals.allowing(chat.id, definition)
        try:
            model = await self._catalog.model_for(definition, chosen=chat.model)
        except ToolbridgeError as error:
            raise ApiError(503, f"agent {definition.name!r} has no usable model: {error}") from error
        history = await anyio.to_thread.run_sync(self._store.get_history, chat.id)
        asked = UserMessage(content=content, attachments=opening.attachments)
        await anyio.to_thread.run_sync(self._append, chat.id, [*opening.before, asked])
        return definition, model, [*history, *opening.before]

    async def _discard(self, run_id: str) -> None:
        """Forget a run that did not start; the error that stopped it is the one to report."""
        try:
            await anyio.to_thread.run_sync(self._ledger.discard, run_id)
        except StoreError as error:
            logger.warning(
                "cannot forget run %s, which did not start (%s); it is reaped later", run_id, error
            )

    def _append(self, chat_id: int, messages: Sequence[Message]) -> None:
        for message in messages:
            self._store.append_message(chat_id, message)

    async def _run(
        self,
        chat_id: int,
        channel: Channel,
        run_id: str,
        start: Start,
    ) -> None:
        RUNNING_CHAT.set(chat_id)  # this task's own context: the run's calls inherit it
        set_log_context(chat_id=str(chat_id), run_id=run_id)
        logger.info("run %s of chat %d started", run_id, chat_id)
        writer = channel.writer
        assert writer is not None
        last: list[str] = []
        status: RunStatus = "failed"
        stream: AgentStream | None = None
        meter: RunMeter | None = None

        # Each task a server makes of one of the run's calls is stored with it: another replica follows
        # the task should this one die (`toolbridge.runs.takeover`).
        starts = TaskStarts(run_id, channel.publish)

        def record(task: TaskHandle) -> None:
            channel.tasks.append(task)
            starts.started(task)

        record_tasks(record)
        try:
            async with anyio.create_task_group() as writing:
                writing.start_soon(writer.run)
                try:
                    stream, recorder, meter = await start()
                    RUN_METER.set(meter)  # before the stream starts the calls that carry it
                    channel.stream = stream
                    if channel.cancel_pending:
                        stream.cancel()  # cancelled while it was being set up: ends at once, `cancelled`
                    async with stream as events:
                        async for event in events:
                            if not channel.lost:  # the chat may be another replica's run's now
                                await recorder.observe(event)
                            if isinstance(event, ApprovalRequestedEvent):
                                channel.pending(event.call.id)  # before anyone can see the request
                            elif isinstance(event, ApprovalDecidedEvent):
                                channel.approvals.pop(event.call_id, None)
                            if isinstance(event, FinalEvent):
                                # Written with the run's end: whoever sees it may start the next run.
                                last = [event.model_dump_json()]
                                status = _status_of(event)
                            else:
                                channel.publish(event.model_dump_json())
                            if isinstance(event, MessageAddedEvent) and isinstance(
                                event.message, AssistantMessage
                            ):
                                starts.calls_stored(call.id for call in event.message.tool_calls)
                            # After publishing: a server's question waits for its call's card to be shown.
                            self.live.track_call(channel, event)
                except ResumeError as error:  # a taken-over run whose task's server is gone: said as it is
                    logger.error("run %s failed: %s", run_id, error)
                    last = [json.dumps({"type": "run_error", "run_id": run_id, "message": str(error)})]
                    status = "failed"
                except Exception as error:
                    logger.exception("run %s failed", run_id)
                    message = describe_failure(error)
                    last = [json.dumps({"type": "run_error", "run_id": run_id, "message": message})]
                    status = "failed"
                finally:
                    writer.stop()
        finally:
            result = stream.result if stream is not None else None
            logger.info("run %s ended: %s", run_id, result.stop_reason if result else "failed")
            if channel.interrupting or not last:  # stopped by the server, or cut off before its end
                status = "interrupted"
                last = [
                    json.dumps({"type": "run_interrupted", "run_id": run_id, "message": INTERRUPTED_MESSAGE})
                ]
            channel.stream, channel.ending = None, True
            with anyio.CancelScope(shield=True), anyio.move_on_after(_INTERRUPT_SECONDS):
                await writer.end(status, last, before_delivery=lambda: self._run_over(chat_id, channel))
            self._run_over(chat_id, channel)
            if meter is not None:
                await meter.close()

    def _run_over(self, chat_id: int, channel: Channel) -> None:
        channel.run_over()
        self.live.release(chat_id, channel)
        self.live.changed()

    @property
    def ledger(self) -> RunLedger:
        """The runs every replica on the database shares."""
        return self._ledger

    async def run_elsewhere(self, chat_id: int) -> str | None:
        """The id of the chat's run in progress when another replica runs it."""
        if self.live.peek(chat_id).run_id is not None:
            return None  # here: this replica knows what waits in it
        run = await anyio.to_thread.run_sync(self._ledger.current, chat_id)
        return run.id if run is not None and run.replica != self.replica else None

    async def cancel(self, chat: ChatSummary) -> None:
        """Stop the chat's run, on whichever replica it runs: its stream and running tools are
        cancelled, and it ends `cancelled`."""
        chat_id = chat.id
        if self.live.peek(chat_id).cancel():
            return
        run = await anyio.to_thread.run_sync(self._ledger.current, chat_id)
        if (
            run is None
            or run.replica == self.replica
            or not await anyio.to_thread.run_sync(self._ledger.signal, run.id, "cancel")
        ):
            raise ApiError(404, f"chat {chat_id} has no run in progress to stop")

    async def get_chat(self, chat_id: int, caller: Caller) -> ChatSummary:
        """Chat `chat_id` when `caller` may see it: with users, a chat is its user's (and admins').
        Anyone else is told it does not exist, as they would be of a chat that does not. The one way
        to a chat: the other methods take what this returns."""
        missing = ApiError(404, f"no chat {chat_id}; list the chats with GET /api/chats")
        try:
            chat = await anyio.to_thread.run_sync(self._store.get_chat, chat_id)
        except ChatNotFoundError:
            raise missing from None
        if not caller.sees(chat.user_id):
            raise missing
        return chat

    async def events(self, chat: ChatSummary, *, last_event_id: int | None = None) -> AsyncIterator[str]:
        """The chat's events as SSE text, until the client leaves; comments keep an idle stream open.
        From after `last_event_id` when given, else from the start of the chat's run in progress."""
        chat_id = chat.id
        channel = self.live.open(chat_id)
        follower = Follower()
        channel.feed.add(follower)  # before the stream reads where to start: nothing falls between
        return self._followed(channel, follower, chat_id, last_event_id)

    async def _followed(
        self, channel: Channel, follower: Follower, chat_id: int, after: int | None
    ) -> AsyncIterator[str]:
        try:
            keepalive = self._settings.keepalive_interval
            stream = follow_events(follower, channel.feed, self._ledger, chat_id, after, keepalive)
            async for frame in stream:
                yield frame
        finally:
            channel.feed.discard(follower)
            self.live.release(chat_id, channel)


def _status_of(event: FinalEvent) -> RunStatus:
    reason = event.result.stop_reason
    return "cancelled" if reason == "cancelled" else "failed" if reason == "model_error" else "completed"
