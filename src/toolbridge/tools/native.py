"""The tools toolbridge brings itself, registered through the same `tool` interface a user's functions use."""

from __future__ import annotations

import difflib
import functools
import os
import zoneinfo
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from toolbridge.tools.calculator import evaluate, format_number
from toolbridge.tools.function import FunctionTool, tool
from toolbridge.types import ToolAnnotations

__all__ = ["calculate_tool", "current_time_tool", "native_tools"]

_PURE = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def get_current_time(timezone: str | None = None) -> dict[str, Any]:
    """Get the current date and time, in a given time zone or the local one.

    Args:
        timezone: An IANA time zone name such as 'Europe/Berlin', 'America/New_York' or 'UTC'.
            Leave it out for the local time zone of the machine running the tool.
    """
    if timezone is None or not timezone.strip():
        zone, zone_name = _local_zone()
    else:
        zone_name = _canonical_zone_name(timezone.strip())
        zone = zoneinfo.ZoneInfo(zone_name)
    now = datetime.now(zone)
    offset = now.strftime("%z")
    return {
        "timezone": zone_name,
        "datetime": now.isoformat(timespec="seconds"),
        "utc_offset": f"{offset[:3]}:{offset[3:]}" if offset else "+00:00",
        "is_dst": bool(now.dst()),
        "day_of_week": now.strftime("%A"),
    }


def calculate(expression: str) -> str:
    """Calculate an arithmetic expression exactly and safely.

    Supports + - * / // % ** and parentheses, functions such as sqrt, sin, cos, tan, log (natural;
    log(x, base) for another base), log10, exp, abs, round, floor, ceil, min, max and factorial, and the
    constants pi, e and tau. Angles are in radians.

    Args:
        expression: The expression to calculate, e.g. '(15 + 27) * 2' or 'sqrt(2) * pi'.
    """
    return format_number(evaluate(expression))


current_time_tool = tool(
    get_current_time, annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False)
)
calculate_tool = tool(calculate, annotations=_PURE)


def native_tools() -> list[FunctionTool]:
    """The built-in tools, ready to register: `get_current_time` and `calculate`."""
    return [current_time_tool, calculate_tool]


# -- time zones ---------------------------------------------------------------------------------------


@functools.cache
def _zones_by_lowercase_name() -> dict[str, str]:
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def _canonical_zone_name(requested: str) -> str:
    """The IANA name for `requested`, matched case-insensitively; a clear ValueError when there is none."""
    zones = _zones_by_lowercase_name()
    found = zones.get(requested.lower().replace(" ", "_"))
    if found is not None:
        return found
    close = difflib.get_close_matches(requested.lower(), zones, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(zones[c]) for c in close)}?" if close else ""
    raise ValueError(
        f"Unknown time zone {requested!r}.{hint} Use an IANA time zone name such as 'Europe/Berlin', "
        "'America/New_York', 'Asia/Tokyo' or 'UTC', or leave timezone out for local time."
    )


def _local_zone() -> tuple[tzinfo, str]:
    """The machine's zone, named as in IANA when that can be found ($TZ, /etc/localtime)."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    localtime = Path("/etc/localtime")
    if localtime.is_symlink():
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    zones = _zones_by_lowercase_name()
    for name in candidates:
        if name and zones.get(name.lower()) == name:
            return zoneinfo.ZoneInfo(name), name
    local = datetime.now().astimezone().tzinfo
    assert local is not None  # astimezone() always attaches a zone
    return local, local.tzname(None) or "local"
