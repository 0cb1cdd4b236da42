"""Dialects whose calls can begin without a marker of their own (Llama 3's bare JSON, Llama 4's bare
`[f(a=1)]`) are read as that dialect in prompt mode, not as `auto`, where such text stays text."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.models import (
    ModelEvent,
    ModelRequest,
    PromptToolsModel,
    TextDelta,
    ToolCallCollector,
    ToolCallDelta,
)
from toolbridge.parsing import call_format, reading_format
from toolbridge.testing import FunctionModel
from toolbridge.types import ToolSpec, UserMessage

pytestmark = pytest.mark.anyio

WEATHER = ToolSpec(
    name="get_weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.mark.parametrize(
    ("dialect", "reading"),
    [
        ("llama3_json", "llama3_json"),
        ("llama_pythonic", "llama_pythonic"),
        ("gemma", "auto"),
        ("hermes", "auto"),
    ],
)
def test_a_dialect_with_bare_calls_is_read_as_itself(dialect: str, reading: str) -> None:
    assert reading_format(dialect) == reading


@pytest.mark.parametrize(
    ("model_id", "dialect"),
    [
        ("meta-llama/Llama-3.3-70B-Instruct", "llama3_json"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama_pythonic"),
        ("google/gemma-4-31b-it", "gemma"),
    ],
)
async def test_prompt_mode_reads_a_llama_or_gemma_models_own_calls(model_id: str, dialect: str) -> None:
    written = call_format(dialect).format_call("get_weather", {"city": "Paris"})
    inner = FunctionModel.replying(["Checking.\n", written[:7], written[7:]])
    inner.model_id = model_id
    request = ModelRequest(messages=[UserMessage(content="Weather in Paris?")], tools=(WEATHER,))

    async with PromptToolsModel(inner).stream(request) as stream:
        events: list[ModelEvent] = [event async for event in stream]

    collector = ToolCallCollector()
    for event in events:
        if isinstance(event, ToolCallDelta):
            collector.add(event)
    calls: list[tuple[str, dict[str, Any]]] = [(c.call.name, c.call.arguments) for c in collector.calls()]
    assert calls == [("get_weather", {"city": "Paris"})]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking.\n"
