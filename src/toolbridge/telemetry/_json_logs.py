"""Log lines as JSON objects, one per line, with the run, chat and user ids of the task that logged."""

from __future__ import annotations

import logging
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from toolbridge.telemetry._context import log_context

__all__ = ["JsonLogFormatter"]


class JsonLogFormatter(JsonFormatter):
    """`{"time": ..., "level": ..., "logger": ..., "message": ..., "run_id": ..., "chat_id": ...}`."""

    def __init__(self) -> None:
        super().__init__(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )

    def add_fields(
        self, log_record: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        super().add_fields(log_record, record, message_dict)
        for key, value in log_context().items():
            log_record.setdefault(key, value)
