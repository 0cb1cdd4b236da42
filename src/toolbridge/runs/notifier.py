"""Hearing of other replicas' writes to runs (`toolbridge.runs.ledger`): new events of a chat, signals for
a run's owner.

On PostgreSQL one connection per process `LISTEN`s on the database-and-schema's channel, reconnecting
with a growing wait when it drops; writers `NOTIFY` in their own transactions. On SQLite (one process)
there is nobody else to hear. Either way this process's own writes are announced in-process at once
(`announce`), so its own streams do not wait for the database's echo.

A notice only says where to look, so listeners are idempotent; after a reconnect they hear `None`:
"anything may have happened meanwhile, look again".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import anyio
from sqlalchemy.engine import make_url

from toolbridge.runs.notices import Notice, parse_notice

__all__ = ["Listener", "RunNotifier"]

logger = logging.getLogger(__name__)

Listener = Callable[[Notice | None], None]
"""Called on the event loop with a notice, or None after missed notices may have been lost."""

_FIRST_RETRY = 0.1
_LONGEST_RETRY = 5.0


class RunNotifier:
    """The notices of one database URL; `channel` finds their channel (the store's `runs.channel`, which
    asks the database, so it is called on a worker thread once `run` starts; None on SQLite)."""

    def __init__(self, url: str, channel: Callable[[], str | None]) -> None:
        self._url = url
        self._channel = channel
        self._listeners: set[Listener] = set()
        self.listening = anyio.Event()
        """Set once notices from other processes can arrive (at once on SQLite: there are none)."""

    def add(self, listener: Listener) -> None:
        self._listeners.add(listener)

    def announce(self, notices: Iterable[Notice | None]) -> None:
        """Tell this process's listeners of what it just committed."""
        for notice in notices:
            for listener in list(self._listeners):
                listener(notice)

    async def run(self) -> None:
        """Listen until cancelled (returns at once on SQLite)."""
        channel = await anyio.to_thread.run_sync(self._channel)
        if channel is None:
            self.listening.set()
            return
        import psycopg  # PostgreSQL only: its driver is what the URL named

        conninfo = make_url(self._url).set(drivername="postgresql").render_as_string(hide_password=False)
        retry = _FIRST_RETRY
        failing = False
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
                    await connection.execute(f'LISTEN "{channel}"')
                    if failing:
                        logger.warning("hearing other replicas' runs again")
                    failing = False
                    self.listening.set()
                    retry = _FIRST_RETRY
                    self.announce([None])  # what was sent while nobody listened is in the rows
                    async for notify in connection.notifies():
                        notice = parse_notice(notify.payload)
                        if notice is not None:  # one from a newer toolbridge: nothing to act on
                            self.announce([notice])
            except psycopg.Error as error:
                # Once per outage: until it ends, other replicas' events reach this one's streams only
                # when something else wakes them, and their signals at each lease renewal.
                logger.log(
                    logging.DEBUG if failing else logging.WARNING,
                    "cannot hear other replicas' runs (%s); retrying every few seconds",
                    str(error).splitlines()[0] if str(error) else type(error).__name__,
                )
                failing = True
            await anyio.sleep(retry)  # a back-off between reconnects, not a synchronisation
            retry = min(retry * 2, _LONGEST_RETRY)
