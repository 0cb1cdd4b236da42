"""A run's events as rows (`EventWriter`, on a real SQLite store): what queues while the database is busy
goes in one transaction, not one per token; the run's end is written with its last events, so whoever
sees the last one finds the chat free."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from toolbridge.runs.ledger import RunEvent, RunLedger
from toolbridge.runs.writer import EventWriter
from toolbridge.store import Store

pytestmark = pytest.mark.anyio


async def test_a_burst_of_deltas_is_one_transaction_and_the_end_comes_with_the_last_event(
    tmp_path: Path,
) -> None:
    with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as store:
        chat = store.create_chat().id
        RunLedger.of(store).claim("r1", chat, replica="here", lease=30)
        batches: list[Sequence[RunEvent]] = []
        writer = EventWriter(RunLedger.of(store), "r1", chat, batches.append)
        deltas = [json.dumps({"type": "text_delta", "text": str(n)}) for n in range(200)]
        for delta in deltas:
            writer.put(delta)
        writer.stop()
        await writer.run()
        assert [len(batch) for batch in batches] == [200]  # one insert for the whole burst
        assert [event.data for event in batches[0]] == deltas

        seen_running: list[str | None] = []

        def when_over() -> None:
            run = RunLedger.of(store).current(chat)
            seen_running.append(run.id if run else None)

        writer.put('{"type": "step_finished"}')
        await writer.end("completed", ['{"type": "final"}'], before_delivery=when_over)
        assert seen_running == [None]  # over in the database before any stream gets the final event
        assert [event.data for event in batches[1]] == ['{"type": "step_finished"}', '{"type": "final"}']
        stored = [event.data for event in RunLedger.of(store).events_after(chat, 0)]
        assert stored == [*deltas, '{"type": "step_finished"}', '{"type": "final"}']
        assert RunLedger.of(store).get("r1").status == "completed"  # type: ignore[union-attr]
