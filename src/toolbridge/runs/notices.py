"""What a NOTIFY about runs says (`toolbridge.runs.ledger` sends them, `toolbridge.runs.notifier` hears
them): only where to look, so that a lost one costs latency, never data."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EventsNotice", "Notice", "SignalsNotice", "parse_notice", "payload"]


@dataclass(frozen=True)
class EventsNotice:
    """Chat `chat_id` has events up to id `last`."""

    chat_id: int
    last: int


@dataclass(frozen=True)
class SignalsNotice:
    """Run `run_id` has new signals for its owner."""

    run_id: str


Notice = EventsNotice | SignalsNotice


def payload(notice: Notice) -> str:
    """The NOTIFY payload of `notice` (`parse_notice` reads it)."""
    if isinstance(notice, EventsNotice):
        return f"events {notice.chat_id} {notice.last}"
    return f"signals {notice.run_id}"


def parse_notice(payload: str) -> Notice | None:
    """The notice in a NOTIFY payload; None for one this version does not know."""
    match payload.split(" "):
        case ["events", chat_id, last] if chat_id.isdigit() and last.isdigit():
            return EventsNotice(int(chat_id), int(last))
        case ["signals", run_id]:
            return SignalsNotice(run_id)
    return None
