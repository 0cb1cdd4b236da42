"""Writing a run's chat down as it goes: each completed message into its chat.

`observe(event)` is called for every event of a run before the event goes on to clients, and writes
each `message_added` (one worker-thread hop, each message its own transaction): a client that has seen
an event can rely on every message completed before it being stored, unless the store cannot be written
(a full disk, a read-only database): then the run still finishes, and `Store.health()` says `degraded`.
The run's tool calls reach the call log through the call pipeline's observer (`CallLog`).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

import anyio

from toolbridge.agent import AgentEvent, MessageAddedEvent
from toolbridge.store._errors import RunNotOwnedError, StoreError

if TYPE_CHECKING:
    from toolbridge.store.store import Store

__all__ = ["RunRecorder"]

_log = logging.getLogger(__name__)


class RunRecorder:
    """Writes the run's messages into its chat: used by the HTTP server and the CLI alike.

    Messages before index `written` of the run's transcript are in the store already (the history, and
    the prompt, which is stored before the run starts)."""

    def __init__(
        self,
        store: Store,
        *,
        chat_id: int,
        written: int,
        model: str | None = None,
        run_of: tuple[str, str] | None = None,
    ) -> None:
        self._store = store
        self._chat_id = chat_id
        self._written = written
        self._model = model
        """The run's model's name, kept with each answer it writes."""
        self._run_of = run_of
        """(run id, replica) of a server's run: its messages are stored only while that replica runs it."""
        self._lost = False

    async def observe(self, event: AgentEvent) -> None:
        if isinstance(event, MessageAddedEvent) and event.index >= self._written and not self._lost:
            self._written = event.index + 1
            append = partial(
                self._store.append_message,
                self._chat_id,
                event.message,
                model=self._model,
                run_of=self._run_of,
            )
            try:
                await anyio.to_thread.run_sync(append)
            except RunNotOwnedError as error:
                _log.warning("%s", error)
                self._lost = True  # nothing more of it: the chat goes on in the other replica's run
            except StoreError as error:
                # A finished answer outweighs its record: the run goes on, the store reports itself
                # degraded (`Store.health()`) and logs the outage once.
                _log.debug("not recorded: %s", error)
