"""One `toolbridge serve` per SQLite file: `serving_lock(url)` holds an exclusive lock on a file next to
the database for as long as the server runs, and a second server on the same file is refused.

SQLite lets one process write at a time and nothing carries a run's events, approvals or cancels from
one process to another; several replicas need PostgreSQL. Commands that only read or briefly write the
database (`history`, `stats`, `users`, ...) take no lock and are never refused.

The lock is `flock(2)`: the kernel drops it when the process ends, however it ends (SIGKILL included),
so a crashed server never leaves a stale lock behind. The file stays; it holds the last holder's pid.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import make_url

from toolbridge.store._errors import StoreError

__all__ = ["DatabaseInUseError", "serving_lock"]

LOCK_SUFFIX = ".serve-lock"
_log = logging.getLogger(__name__)


class DatabaseInUseError(StoreError):
    def __init__(self, database: str, holder: str) -> None:
        self.database = database
        super().__init__(
            f"the SQLite database {database} is already served by another `toolbridge serve`{holder}. "
            "A SQLite file serves one process; to run several replicas, give them all one PostgreSQL "
            "database (--db postgresql+psycopg://USER:PASSWORD@HOST/DB), or stop the other server"
        )


def _lock_path(url: str) -> Path | None:
    """The lock file of a SQLite database URL; None for other databases and in-memory SQLite."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    database = Path(parsed.database).expanduser()
    return database.with_name(database.name + LOCK_SUFFIX)


@contextmanager
def serving_lock(url: str) -> Iterator[None]:
    """Hold the database's serving lock while the block runs; `DatabaseInUseError` if another process
    holds it. Nothing to hold for PostgreSQL (replicas share it) or where flock does not exist."""
    path = _lock_path(url)
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the single-replica rule is then only documented
        path = None
    if path is None:
        yield
        return
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as error:  # a read-only directory: serving may still work, degraded to reads
        _log.warning("no serving lock (%s): a second server on this database would not be refused", error)
        yield
        return
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DatabaseInUseError(str(path)[: -len(LOCK_SUFFIX)], _holder(descriptor)) from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, str(os.getpid()).encode())
        yield
    finally:
        os.close(descriptor)  # closing the last descriptor releases the lock


def _holder(descriptor: int) -> str:
    """` (pid N)` from the lock file, when the holder wrote it."""
    written = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
    return f" (pid {written})" if written.isdigit() else ""
