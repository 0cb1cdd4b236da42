"""What servers log to their client (`notifications/message`): into toolbridge's log under the
server's name, and the last of them kept per connection for `toolbridge servers --logs S`.

A server controls how much and how fast it logs, so both are bounded, as for its stderr: each message
is cut to `MAX_TEXT` characters, and at most 20 lines per 10 s reach toolbridge's log (the rest are
counted and the count logged once as a warning). Every message is still kept and handed on.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as mcp

from toolbridge.mcp._log_limit import RateLimitedLog
from toolbridge.mcp.client_features import LogHandler

__all__ = ["LOGGER_PREFIX", "LogEntry", "ServerLog"]

LOGGER_PREFIX = "toolbridge.servers"
"""A server's messages go to the Python logger `toolbridge.servers.<server name>`."""

KEPT_ENTRIES = 200
MAX_TEXT = 2000
"""Characters of one message that are kept and logged; the rest of a longer one is left out."""

# MCP's eight levels (RFC 5424) onto Python's five.
_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


@dataclass(frozen=True)
class LogEntry:
    """One message a server logged."""

    time: float
    """When it arrived (seconds since the epoch)."""
    level: str
    logger: str | None
    text: str

    def describe(self) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.time))
        source = f" {self.logger}:" if self.logger else ""
        return f"{stamp} {self.level.upper()}{source} {self.text}"


class ServerLog:
    """The last `limit` messages of one server, across its sessions, and its Python logger."""

    def __init__(self, server: str, *, limit: int = KEPT_ENTRIES) -> None:
        self.server = server
        self.logger = logging.getLogger(f"{LOGGER_PREFIX}.{server}")
        self._entries: deque[LogEntry] = deque(maxlen=limit)
        self._lines = RateLimitedLog(self.logger, logging.WARNING, source=f"server {server!r} log messages")

    @property
    def entries(self) -> list[LogEntry]:
        return list(self._entries)

    def record(self, params: mcp.LoggingMessageNotificationParams) -> LogEntry:
        logger = _cut(params.logger, 200) if params.logger is not None else None
        entry = LogEntry(time=time.time(), level=params.level, logger=logger, text=_cut(_text(params.data)))
        self._entries.append(entry)
        level = _PYTHON_LEVELS.get(entry.level, logging.INFO)
        if self.logger.isEnabledFor(level):  # only lines that would be logged spend the budget
            source = f" ({entry.logger})" if entry.logger else ""
            self._lines.log("%s%s", entry.text, source, level=level)
        return entry

    def close(self) -> None:
        """Log how many messages were left out of the log since the last report, if any were."""
        self._lines.report_suppressed()

    def callback(
        self, also: LogHandler | None
    ) -> Callable[[mcp.LoggingMessageNotificationParams], Awaitable[None]]:
        """The session's `logging_callback`: record the message, then hand it to `also` (if any)."""

        async def received(params: mcp.LoggingMessageNotificationParams) -> None:
            self.record(params)
            if also is not None:
                await also(self.server, params)

        return received


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters left out)"


def _text(data: Any) -> str:
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(data)
