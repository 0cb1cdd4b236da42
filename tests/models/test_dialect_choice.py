"""Which dialect a model's text is read and written in (its profile, or its config), whether its text
starts inside reasoning, and what happens to a call cut off at the token limit."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.models import (
    Finish,
    InvalidToolCall,
    Model,
    ModelEvent,
    ModelRequest,
    PromptToolsModel,
    ReasoningDelta,
    TextDelta,
    ToolCallCollector,
    ToolCallDelta,
)
from toolbridge.models.model_profiles import DEFAULT_PROFILE, MODEL_PROFILES, model_profile
from toolbridge.models.tool_calling import NativeToolsModel
from toolbridge.parsing import call_format, dialect_names
from toolbridge.testing import FunctionModel
from toolbridge.types import SystemMessage, ToolSpec, UserMessage

pytestmark = pytest.mark.anyio

WEATHER = ToolSpec(
    name="get_weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def drain(model: Model, *, tools: tuple[ToolSpec, ...] = (WEATHER,)) -> list[ModelEvent]:
    request = ModelRequest(messages=[UserMessage(content="Weather in Paris?")], tools=tools)
    async with model.stream(request) as events:
        return [event async for event in events]


def calls_of(events: list[ModelEvent]) -> list[tuple[str, dict[str, Any]]]:
    collector = ToolCallCollector()
    for event in events:
        if isinstance(event, ToolCallDelta):
            collector.add(event)
    return [(c.call.name, c.call.arguments) for c in collector.calls()]


def of_type(events: list[ModelEvent], kind: type[TextDelta] | type[ReasoningDelta]) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


@pytest.mark.parametrize(
    ("model_id", "dialect", "reasoning_open"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_xml", False),
        ("qwen3-coder:30b", "qwen3_xml", False),
        ("Qwen/Qwen3-30B-A3B-Thinking-2507", "hermes", True),
        ("qwq-32b", "hermes", True),
        ("qwen3:8b", "hermes", False),
        ("zai-org/GLM-4.5-Air", "glm", False),
        ("openai/gpt-oss-120b", "harmony", False),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek", True),
        ("deepseek-chat", "deepseek", False),
        ("moonshotai/Kimi-K2-Instruct-0905", "kimi", False),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama3_json", False),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama_pythonic", False),
        ("mistralai/Devstral-Small-2507", "mistral", False),
        ("google/gemma-4-27b-it", "gemma", False),
        ("my-own-finetune", "hermes", False),
        # Later versions of a family keep its format (and its hint), also ones the table does not name.
        ("Qwen/Qwen3.6-35B-A3B", "qwen3_xml", True),
        ("qwen3.7-flash", "qwen3_xml", True),
        ("qwen3.10:32b", "qwen3_xml", True),
        ("qwen35b-finetune", "hermes", False),
        ("zai-org/GLM-4.6", "glm", False),
        ("glm-5.1", "glm", True),
        ("deepseek-v3.2", "deepseek", True),  # V3.1+ open <think> in the prompt when thinking
        ("deepseek-ai/DeepSeek-V4-Flash", "deepseek", True),
        ("deepseek-ai/DeepSeek-V4.1-Pro", "deepseek", True),
        ("deepseek-v5", "deepseek", True),
        ("moonshotai/Kimi-K2-Thinking", "kimi", True),
        ("moonshotai/Kimi-K2.5", "kimi", True),
        ("kimi-k2.6:cloud", "kimi", True),
        ("kimi-k3", "kimi", True),
        ("kimi-k4-preview", "kimi", True),
        ("kimi-k2-turbo-preview", "kimi", False),
        ("accounts/fireworks/models/glm-4p7", "glm", True),
        ("accounts/fireworks/models/kimi-k2p5", "kimi", True),
    ],
)
def test_model_profiles_name_each_familys_dialect(model_id: str, dialect: str, reasoning_open: bool) -> None:
    profile = model_profile(model_id)
    assert (profile.dialect, profile.reasoning_open) == (dialect, reasoning_open)


def test_every_profile_names_a_dialect_the_parser_reads() -> None:
    assert {profile.dialect for _, profile in MODEL_PROFILES} <= set(dialect_names())
    assert DEFAULT_PROFILE.dialect == "hermes"


async def test_prompt_mode_asks_a_known_model_for_its_own_dialect_and_reads_it() -> None:
    written = call_format("mistral").format_call("get_weather", {"city": "Paris"})
    inner = FunctionModel.replying(["Checking.", written])
    inner.model_id = "mistralai/Mistral-Small-3.2-24B-Instruct-2506"

    events = await drain(PromptToolsModel(inner))

    system = inner.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert call_format("mistral").call_instructions in system.content
    assert calls_of(events) == [("get_weather", {"city": "Paris"})]


async def test_a_dialect_in_the_model_config_overrides_the_profile() -> None:
    inner = FunctionModel.replying("Hi.", name="qwen3:8b")
    inner.dialect = "kimi"

    await drain(PromptToolsModel(inner))

    system = inner.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert call_format("kimi").call_instructions in system.content
    assert call_format("hermes").call_instructions not in system.content


async def test_unknown_models_are_asked_for_hermes() -> None:
    inner = FunctionModel.replying("Hi.")
    model = PromptToolsModel(inner)
    assert model.dialect == "hermes"


async def test_text_of_a_model_whose_prompt_opens_reasoning_starts_as_reasoning() -> None:
    call = call_format("hermes").format_call("get_weather", {"city": "Paris"})
    inner = FunctionModel.replying(["The user wants ", "the weather.\n</think>\n\n", "Sure.", call])
    inner.model_id = "qwq-32b"

    events = await drain(NativeToolsModel(inner))

    assert of_type(events, ReasoningDelta) == "The user wants the weather.\n"
    assert of_type(events, TextDelta) == "\n\nSure."
    assert calls_of(events) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    ("dialect", "reasoning_open", "expected"),
    [(None, None, True), ("hermes", None, True), ("llama3_json", None, False), ("llama3_json", True, True)],
)
def test_the_profiles_reasoning_hint_goes_with_its_dialect(
    dialect: str | None, reasoning_open: bool | None, expected: bool
) -> None:
    # A config naming another dialect than the name's profile says the profile is not this model's.
    inner = FunctionModel.replying("Hi.")
    inner.model_id, inner.dialect, inner.reasoning_open = "qwq-32b", dialect, reasoning_open
    assert NativeToolsModel(inner).reasoning_open is expected


async def test_when_the_server_separates_reasoning_the_text_is_not_read_as_reasoning() -> None:
    # vLLM with a reasoning parser, Ollama's `thinking`: the profile's open reasoning no longer applies.
    inner = FunctionModel.replying([ReasoningDelta("Thinking it over."), "It is sunny."])
    inner.model_id = "qwq-32b"

    events = await drain(NativeToolsModel(inner))

    assert of_type(events, ReasoningDelta) == "Thinking it over."
    assert of_type(events, TextDelta) == "It is sunny."


async def test_a_text_call_cut_off_at_the_token_limit_never_becomes_a_call() -> None:
    call = call_format("hermes").format_call("get_weather", {"city": "Paris"})
    inner = FunctionModel.replying(["Checking.", call[:-15], Finish("length")])

    events = await drain(PromptToolsModel(inner))

    assert calls_of(events) == []
    [invalid] = [e for e in events if isinstance(e, InvalidToolCall)]
    assert "token limit" in invalid.message
    assert "token limit" in invalid.feedback
    assert call[:-15] in invalid.feedback
    assert events[-1] == Finish("length")


async def test_the_same_call_complete_runs_even_when_the_reply_then_hit_the_limit() -> None:
    call = call_format("hermes").format_call("get_weather", {"city": "Paris"})
    inner = FunctionModel.replying(["Checking.", call, Finish("length")])

    events = await drain(PromptToolsModel(inner))

    assert calls_of(events) == [("get_weather", {"city": "Paris"})]
    assert not [e for e in events if isinstance(e, InvalidToolCall)]


def test_native_arguments_cut_off_at_the_token_limit_are_not_repaired_into_a_call() -> None:
    collector = ToolCallCollector()
    collector.add(ToolCallDelta(0, "call_1", "get_weather", '{"city": "Paris"}'))
    collector.add(ToolCallDelta(1, "call_2", "get_weather", '{"city": "Ber'))

    whole, cut = collector.calls(truncated=True)
    assert (whole.problem, whole.cut_off) == (None, False)
    assert cut.cut_off
    assert cut.problem is not None
    assert "token limit" in cut.problem
    # Without the limit the text is cut short all the same: refused, never closed into a call.
    untold = collector.calls()[1]
    assert (untold.call.arguments, untold.cut_off) == ({}, False)
    assert "ends inside a string" in (untold.problem or "")


async def test_bare_text_values_are_typed_by_the_requests_tool_schemas() -> None:
    # Qwen3-Coder writes every value as text; the tool's schema says which are numbers.
    forecast = ToolSpec(
        name="forecast",
        input_schema={
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "zip": {"type": "string"},
            },
        },
    )
    written = "<tool_call>\n<function=forecast>\n<parameter=city>\nParis\n</parameter>\n"
    written += (
        "<parameter=days>\n3\n</parameter>\n<parameter=zip>\n75001\n</parameter>\n</function>\n</tool_call>"
    )
    inner = FunctionModel.replying(written)
    inner.model_id = "qwen3-coder:30b"

    events = await drain(PromptToolsModel(inner), tools=(forecast,))

    assert calls_of(events) == [("forecast", {"city": "Paris", "days": 3, "zip": "75001"})]
