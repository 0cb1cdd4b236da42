"""The servers' logging: text, or JSON objects, one per line (`_json_logs.JsonLogFormatter`, imported by
`logging` only when asked for: python-json-logger comes with the `serve` extra)."""

from __future__ import annotations

from typing import Any

__all__ = ["logging_config"]


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    """A `logging.config.dictConfig` for a server: uvicorn's loggers and ours, in `log_format` (`json` or
    `text`) on stderr; toolbridge's own lifecycle messages (serving, stopping, runs) at INFO."""
    formatter: dict[str, Any] = (
        {"()": "toolbridge.telemetry._json_logs.JsonLogFormatter"}
        if log_format == "json"
        else {"format": "%(levelname)s %(name)s: %(message)s"}
    )
    handler = {"class": "logging.StreamHandler", "formatter": "main", "stream": "ext://sys.stderr"}
    level = level.upper()
    ours = "DEBUG" if level == "DEBUG" else "INFO"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": formatter},
        "handlers": {"stderr": handler},
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["stderr"], "level": level, "propagate": False},
            "toolbridge": {"level": ours},
        },
        "root": {"handlers": ["stderr"], "level": level},
    }
