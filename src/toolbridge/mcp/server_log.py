"""What servers log to their client (`notifications/message`): into toolbridge's log under the
server's name, and the last of them kept per connection for `toolbridge servers --logs S`."""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as mcp

from toolbridge.mcp.client_features import LogHandler

__all__ = ["LOGGER_PREFIX", "LogEntry", "ServerLog"]

LOGGER_PREFIX = "toolbridge.servers"
"""A server's messages go to the Python logger `toolbridge.servers.<server name>`."""

KEPT_ENTRIES = 200

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

    @property
    def entries(self) -> list[LogEntry]:
        return list(self._entries)

    def record(self, params: mcp.LoggingMessageNotificationParams) -> LogEntry:
        entry = LogEntry(time=time.time(), level=params.level, logger=params.logger, text=_text(params.data))
        self._entries.append(entry)
        source = f" ({entry.logger})" if entry.logger else ""
        self.logger.log(_PYTHON_LEVELS.get(entry.level, logging.INFO), "%s%s", entry.text, source)
        return entry

    def callback(
        self, also: LogHandler | None
    ) -> Callable[[mcp.LoggingMessageNotificationParams], Awaitable[None]]:
        """The session's `logging_callback`: record the message, then hand it to `also` (if any)."""

        async def received(params: mcp.LoggingMessageNotificationParams) -> None:
            self.record(params)
            if also is not None:
                await also(self.server, params)

        return received


def _text(data: Any) -> str:
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(data)
