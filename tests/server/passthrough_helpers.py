"""Pass-through tests' shared parts: a client tool, config entries for scripted upstreams, and a server
whose `models` section points at them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from server_helpers import RunningServer, serve_in_thread

from toolbridge.testing import RecordedRequest, ScriptedModelServer

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "days": {"type": "integer", "minimum": 1},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The local time in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TOOLS = [WEATHER_TOOL, TIME_TOOL]
ASK = [{"role": "user", "content": "What's the weather in Paris?"}]


def upstream(model: ScriptedModelServer, tool_mode: str = "native", **extra: Any) -> dict[str, Any]:
    """A `models` entry for a scripted upstream."""
    return {
        "provider": "openai",
        "model": model.model_name,
        "base_url": model.base_url,
        "api_key": "test",
        "max_retries": 0,
        "tool_mode": tool_mode,
        **extra,
    }


@contextmanager
def passthrough_server(tmp_path: Path, models: dict[str, Any], **sections: Any) -> Iterator[RunningServer]:
    """`toolbridge serve` with these `models` and no MCP servers (its built-in agent has no model)."""
    with serve_in_thread(tmp_path, None, models=models, **sections) as server:
        yield server


def system_text(request: RecordedRequest) -> str:
    first = request.messages[0]
    return str(first["content"]) if first["role"] == "system" else ""


def arguments_of(call: Any) -> Any:
    return json.loads(call.function.arguments)
