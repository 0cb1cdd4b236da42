"""One chat's live side on a replica: its run in progress, open event streams and what waits in the run
(approvals, servers' questions). `ChatHub` keeps one per chat only while it is not idle."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio

from toolbridge.agent import AgentStream
from toolbridge.mcp.tasks import TaskHandle
from toolbridge.runs.feed import ChatFeed
from toolbridge.runs.ledger import RunEvent, RunSignal
from toolbridge.runs.writer import EventWriter

__all__ = ["Channel", "PendingApproval"]


@dataclass
class PendingApproval:
    answered: anyio.Event = field(default_factory=anyio.Event)
    approved: bool = False


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
        self.questions.clear()
        self.calls.clear()
        self.tasks.clear()

    def pending(self, call_id: str) -> PendingApproval:
        return self.approvals.setdefault(call_id, PendingApproval())

    def decide(self, call_id: str, approved: bool) -> bool:
        """Answer the call's approval when it waits here for one; False when it does not."""
        pending = self.approvals.get(call_id)
        if pending is None or pending.answered.is_set():
            return False
        pending.approved = approved
        pending.answered.set()
        return True

    @property
    def idle(self) -> bool:
        """Nothing lives here: no run, stream, pending approval or question (the chat's history is stored)."""
        return self.run_id is None and not (self.feed.followers or self.approvals or self.questions)
