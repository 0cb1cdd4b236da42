"""A chat's live side on a replica: its run in progress, open event streams and what waits in the run
(approvals, servers' questions). `LiveChats` keeps one per chat only while it is not idle."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio

from toolbridge.agent import AgentEvent, AgentStream, ToolCallFinishedEvent, ToolCallStartedEvent
from toolbridge.mcp.tasks import TaskHandle, hand_over
from toolbridge.runs.feed import ChatFeed
from toolbridge.runs.ledger import EventsNotice, Notice, RunEvent, RunSignal
from toolbridge.runs.writer import EventWriter

__all__ = ["Channel", "LiveChats", "PendingApproval"]

logger = logging.getLogger(__name__)


@dataclass
class PendingApproval:
    answered: anyio.Event = field(default_factory=anyio.Event)
    approved: bool = False
    for_chat: bool = False
    """Approved with the chat's later calls of the same tool."""


@dataclass
class Channel:
    """One chat's live side on this replica."""

    run_id: str | None = None
    """The chat's run in progress on this replica."""
    stream: AgentStream | None = None
    """The run in progress, to cancel it."""
    writer: EventWriter | None = None
    interrupting: bool = False
    """The server is stopping the run: it ends `interrupted`, not cancelled."""
    claimed: bool = False
    """The run's row is in the database: it holds a lease (this replica renews it) and takes signals."""
    cancel_pending: bool = False
    """Cancelled while it was being set up: it stops as soon as it starts."""
    lost: bool = False
    """Another replica reaped the run or took it over (this one stalled past its lease): it stops, and
    what it still completes is neither its chat's nor its events."""
    tasks: list[TaskHandle] = field(default_factory=list)
    """The tasks servers made of the run's calls (their handles are stored with the run)."""
    following: anyio.CancelScope | None = None
    """While a run taken over follows its tasks (`toolbridge.runs.resume`): cancelling the run stops
    following them (and cancels them at their servers)."""
    ending: bool = False
    """The run is over, its last events being written: nothing to cancel, and the chat is free once
    they are (a page that saw them through another replica may start the next run at once)."""
    feed: ChatFeed = field(default_factory=ChatFeed)
    """This replica's open event streams of the chat, and the one read of new rows they share."""
    approvals: dict[str, PendingApproval] = field(default_factory=dict)
    allowed_tools: set[str] = field(default_factory=set)
    """Tools allowed for the chat during the run here (those allowed before it need no approval at all)."""
    calls: dict[str, str | None] = field(default_factory=dict)
    """The run's calls in flight: id -> server (which chat a server's question belongs to)."""
    questions: dict[str, Callable[[RunSignal], None]] = field(default_factory=dict)
    """The servers' questions waiting in the run: request id -> what takes another replica's answer."""

    def deliver(self, events: Sequence[RunEvent]) -> None:
        self.feed.hand(events)

    def publish(self, data: str) -> None:
        """An event for the chat's streams: stored with the run in progress here, else sent as it is (also
        once the run's last events are being written: the writer takes no more)."""
        if self.writer is not None and not self.ending:
            self.writer.put(data)
        else:
            self.feed.hand_unstored(data)

    def cancel(self) -> bool:
        """Stop the run here, now or (while it is being set up) as soon as it starts; False when there is
        none to stop here (no run, or its end is being written)."""
        if self.stream is not None:
            self.stream.cancel()
            return True
        if self.run_id is not None and not self.ending:
            self.cancel_pending = True
            if self.following is not None:
                self.following.cancel()
            return True
        return False

    def run_over(self) -> None:
        """Forget the run and everything that waited in it."""
        self.run_id, self.stream, self.writer, self.following = None, None, None, None
        self.claimed = self.interrupting = self.cancel_pending = self.ending = self.lost = False
        self.approvals.clear()
        self.allowed_tools.clear()
        self.questions.clear()
        self.calls.clear()
        self.tasks.clear()

    def pending(self, call_id: str) -> PendingApproval:
        return self.approvals.setdefault(call_id, PendingApproval())

    def decide(self, call_id: str, approved: bool, *, for_chat: bool = False) -> bool:
        """Answer the call's approval when it waits here for one (`for_chat`: and allow its tool for the
        rest of the chat); False when it does not."""
        pending = self.approvals.get(call_id)
        if pending is None or pending.answered.is_set():
            return False
        pending.approved, pending.for_chat = approved, approved and for_chat
        pending.answered.set()
        return True

    @property
    def idle(self) -> bool:
        """Nothing lives here: no run, stream, pending approval or question (the chat's history is stored)."""
        return self.run_id is None and not (self.feed.followers or self.approvals or self.questions)


class LiveChats:
    """The channels of the chats this replica holds live state for, and what changes in their runs."""

    def __init__(self) -> None:
        self._channels: dict[int, Channel] = {}
        self.calls_changed = anyio.Event()
        """Set (and replaced) when a chat's run starts a call, and when a run ends."""

    def open(self, chat_id: int) -> Channel:
        """The chat's channel, kept until `release` finds it idle: for what registers a run or a stream."""
        return self._channels.setdefault(chat_id, Channel())

    def peek(self, chat_id: int) -> Channel:
        """The chat's channel when it has one, else an empty one that is not kept (only to read)."""
        return self._channels.get(chat_id) or Channel()

    def release(self, chat_id: int, channel: Channel) -> None:
        # Dropped once idle, or a long-running server would keep one for every chat ever touched.
        if channel.idle and self._channels.get(chat_id) is channel:
            del self._channels[chat_id]

    @property
    def chat_ids(self) -> frozenset[int]:
        """The chats with live state here (a run, an event stream, a pending question)."""
        return frozenset(self._channels)

    def items(self) -> list[tuple[int, Channel]]:
        return list(self._channels.items())

    def heard(self, notice: Notice | None) -> None:
        """Another replica stored events (None: this one may have missed some): the streams read them."""
        if isinstance(notice, EventsNotice):
            channel = self._channels.get(notice.chat_id)
            if channel is not None:
                channel.feed.notice(notice.last)
        elif notice is None:
            for channel in self._channels.values():
                channel.feed.notice(None)

    # -- runs, as the keeper sees them ----------------------------------------------------------------

    def owned_runs(self) -> list[str]:
        # Claimed ones only: a run whose claim is not yet committed has no lease to renew, and must not be
        # taken for one another replica reaped.
        return [channel.run_id for channel in self._channels.values() if channel.run_id and channel.claimed]

    def owning(self, run_id: str) -> Channel | None:
        return next((c for c in self._channels.values() if c.run_id == run_id), None)

    def apply_signal(self, signal: RunSignal) -> None:
        channel = self.owning(signal.run_id)
        if channel is None:
            return
        if signal.kind == "cancel":
            if channel.cancel():
                logger.info("run %s cancelled from another replica", signal.run_id)
        elif signal.kind == "answer":
            take = channel.questions.get(signal.call_id or "")
            if take is not None:
                take(signal)
        elif signal.call_id is not None:
            channel.decide(signal.call_id, signal.kind != "deny", for_chat=signal.kind == "allow")

    def run_lost(self, run_id: str) -> None:
        channel = self.owning(run_id)
        if channel is not None:
            hand_over(task.task_id for task in channel.tasks)  # the replica that took the run follows them
            channel.lost = True
            if channel.writer is not None:
                channel.writer.disown()
            channel.cancel()

    def running(self) -> int:
        """How many chats' runs are in progress."""
        return sum(channel.run_id is not None for channel in self._channels.values())

    def close_streams(self) -> None:
        """End every open event stream (the server is stopping): open pages must not hold up its exit."""
        for channel in self._channels.values():
            for follower in list(channel.feed.followers):
                follower.close()

    # -- calls in flight ------------------------------------------------------------------------------

    def track_call(self, channel: Channel, event: AgentEvent) -> None:
        if isinstance(event, ToolCallStartedEvent):
            channel.calls[event.call.id] = event.server
            self.changed()
        elif isinstance(event, ToolCallFinishedEvent):
            channel.calls.pop(event.call_id, None)

    def changed(self) -> None:
        self.calls_changed.set()
        self.calls_changed = anyio.Event()

    async def call_shown(self, chat_id: int, call_id: str) -> bool:
        """Wait until the chat's run has published the start of call `call_id` (the server may ask
        before the agent's event reaches the page); False when the run is over."""
        channel = self.peek(chat_id)
        while call_id not in channel.calls:
            if channel.run_id is None:
                return False
            await self.calls_changed.wait()
        return True

    @contextmanager
    def expecting_answer(
        self, chat_id: int, request_id: str, take: Callable[[RunSignal], None]
    ) -> Iterator[None]:
        """While inside, an `answer` signal another replica leaves for server request `request_id` of
        the chat's run here is handed to `take`."""
        channel = self.open(chat_id)
        channel.questions[request_id] = take
        try:
            yield
        finally:
            channel.questions.pop(request_id, None)
            self.release(chat_id, channel)

    def publish(self, chat_id: int, data: str) -> None:
        """Send an event of the server's own (not the agent's) to the chat's event streams."""
        self.peek(chat_id).publish(data)
