"""The memory of endpoints that reject native tools: the next run starts in prompt mode directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbridge.errors import ToolsNotSupportedError
from toolbridge.models import (
    DemoModel,
    ModelRequest,
    OpenAIChatModel,
    forget_tool_mode,
    remember_prompt_mode,
    remembered_tool_mode,
)
from toolbridge.testing import ScriptedModel, Turn
from toolbridge.types import ToolSpec, UserMessage

URL = "http://127.0.0.1:11434/v1"


def ollama(model_id: str = "gemma2:2b", **options: object) -> OpenAIChatModel:
    return OpenAIChatModel(model_id, provider="ollama", base_url=URL, **options)  # type: ignore[arg-type]


def test_a_remembered_endpoint_starts_in_prompt_mode_and_others_do_not(isolated_cache: Path) -> None:
    assert ollama().tool_mode == "auto"
    first = ollama()
    remember_prompt_mode(first, reason='"gemma2:2b" does not support tools')
    assert first.tool_mode == "prompt"

    assert ollama().tool_mode == "prompt"  # the next run
    assert ollama("qwen3:8b").tool_mode == "auto"  # another model on the same server
    other_server = OpenAIChatModel("gemma2:2b", provider="ollama", base_url="http://10.0.0.5:11434/v1")
    assert other_server.tool_mode == "auto"  # the same model elsewhere may have a newer template

    saved = json.loads((isolated_cache / "tool_modes.json").read_text())
    assert saved[f"{URL}#gemma2:2b"]["tool_mode"] == "prompt"
    assert saved[f"{URL}#gemma2:2b"]["reason"] == '"gemma2:2b" does not support tools'
    assert remembered_tool_mode(URL + "/", "gemma2:2b") == "prompt"  # a trailing slash is the same URL


def test_an_explicit_tool_mode_is_not_overridden() -> None:
    remember_prompt_mode(ollama())
    assert ollama(tool_mode="native").tool_mode == "native"


def test_forgetting_lets_the_next_run_try_native_again() -> None:
    remember_prompt_mode(ollama())
    forget_tool_mode(ollama())
    assert ollama().tool_mode == "auto"


def test_an_unreadable_cache_is_ignored_and_replaced(isolated_cache: Path) -> None:
    isolated_cache.mkdir(parents=True)
    (isolated_cache / "tool_modes.json").write_text("{not json")
    assert ollama().tool_mode == "auto"
    remember_prompt_mode(ollama())
    assert ollama().tool_mode == "prompt"


def test_a_model_without_an_endpoint_just_switches(isolated_cache: Path) -> None:
    demo = DemoModel()
    remember_prompt_mode(demo)
    assert demo.tool_mode == "prompt"
    assert not (isolated_cache / "tool_modes.json").exists()


@pytest.mark.anyio
async def test_the_loops_flow_rejected_tools_then_remembered() -> None:
    async with ScriptedModel([Turn.error(400, '"gemma2:2b" does not support tools')]) as scripted:
        model = OpenAIChatModel("gemma2:2b", provider="ollama", base_url=scripted.base_url, max_retries=0)
        request = ModelRequest([UserMessage(content="time?")], tools=[ToolSpec(name="get_current_time")])
        with pytest.raises(ToolsNotSupportedError) as raised:
            async with model.stream(request) as events:
                _ = [event async for event in events]
        await model.aclose()
        remember_prompt_mode(model, reason=str(raised.value))
        again = OpenAIChatModel("gemma2:2b", provider="ollama", base_url=scripted.base_url)
    assert again.tool_mode == "prompt"
