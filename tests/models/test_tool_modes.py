"""The memory of endpoints that reject native tools: the next run starts in prompt mode directly. The
memory file is read and written in a worker thread, never on the event loop."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from toolbridge.errors import ToolsNotSupportedError
from toolbridge.models import (
    AutoToolsModel,
    DemoModel,
    ModelRequest,
    OpenAIChatModel,
    forget_tool_mode,
    remember_prompt_mode,
    remembered_tool_mode,
)
from toolbridge.models import tool_modes as memory
from toolbridge.testing import ScriptedModelServer, Turn
from toolbridge.types import ToolSpec, UserMessage

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:11434/v1"


def ollama(model_id: str = "gemma2:2b", **options: object) -> OpenAIChatModel:
    return OpenAIChatModel(model_id, provider="ollama", base_url=URL, **options)  # type: ignore[arg-type]


async def mode_of_next_run(model: OpenAIChatModel) -> str:
    """The mode an agent's `auto` wrapper settles on before the first request of a run."""
    wrapper = AutoToolsModel(model)
    await wrapper.prepare()
    return wrapper.active_tool_mode


async def test_a_remembered_endpoint_starts_in_prompt_mode_and_others_do_not(isolated_cache: Path) -> None:
    assert await mode_of_next_run(ollama()) == "native"
    first = ollama()
    await remember_prompt_mode(first, reason='"gemma2:2b" does not support tools')
    assert first.tool_mode == "auto"  # the model object, shared by chats, stays as configured

    assert await mode_of_next_run(ollama()) == "prompt"  # the next run
    assert await mode_of_next_run(ollama("qwen3:8b")) == "native"  # another model on the same server
    other_server = OpenAIChatModel("gemma2:2b", provider="ollama", base_url="http://10.0.0.5:11434/v1")
    assert await mode_of_next_run(other_server) == "native"  # the same model elsewhere may differ

    saved = json.loads((isolated_cache / "tool_modes.json").read_text())
    assert saved[f"{URL}#gemma2:2b"]["tool_mode"] == "prompt"
    assert saved[f"{URL}#gemma2:2b"]["reason"] == '"gemma2:2b" does not support tools'
    assert await remembered_tool_mode(URL + "/", "gemma2:2b") == "prompt"  # a trailing slash: same URL


async def test_an_explicit_tool_mode_is_not_overridden() -> None:
    await remember_prompt_mode(ollama())
    explicit = ollama(tool_mode="native")
    await AutoToolsModel(explicit).prepare()
    assert explicit.tool_mode == "native"


async def test_forgetting_lets_the_next_run_try_native_again() -> None:
    await remember_prompt_mode(ollama())
    await forget_tool_mode(ollama())
    assert await mode_of_next_run(ollama()) == "native"


@pytest.fixture
def unreadable_cache(isolated_cache: Path) -> Path:
    isolated_cache.mkdir(parents=True)
    (isolated_cache / "tool_modes.json").write_text("{not json")
    return isolated_cache


async def test_an_unreadable_cache_is_ignored_and_replaced(unreadable_cache: Path) -> None:
    assert await mode_of_next_run(ollama()) == "native"
    await remember_prompt_mode(ollama())
    assert await mode_of_next_run(ollama()) == "prompt"


async def test_a_model_without_an_endpoint_is_not_remembered(isolated_cache: Path) -> None:
    demo = DemoModel()
    await remember_prompt_mode(demo)
    assert demo.tool_mode == "auto"
    assert not (isolated_cache / "tool_modes.json").exists()


async def test_the_memory_file_is_read_and_written_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop_thread = threading.current_thread()
    threads: list[tuple[str, threading.Thread]] = []
    read, write = memory._read, memory._write

    def reading() -> dict[str, Any]:
        threads.append(("read", threading.current_thread()))
        return read()

    def writing(entries: dict[str, Any]) -> None:
        threads.append(("write", threading.current_thread()))
        write(entries)

    monkeypatch.setattr(memory, "_read", reading)
    monkeypatch.setattr(memory, "_write", writing)
    await remember_prompt_mode(ollama())
    assert await mode_of_next_run(ollama()) == "prompt"
    await forget_tool_mode(ollama())

    assert [what for what, _ in threads] == ["read", "write", "read", "read", "write"]
    assert all(thread is not loop_thread for _, thread in threads)


async def test_the_loops_flow_rejected_tools_then_remembered() -> None:
    async with ScriptedModelServer([Turn.error(400, '"gemma2:2b" does not support tools')]) as scripted:
        model = OpenAIChatModel("gemma2:2b", provider="ollama", base_url=scripted.base_url, max_retries=0)
        request = ModelRequest([UserMessage(content="time?")], tools=[ToolSpec(name="get_current_time")])
        with pytest.raises(ToolsNotSupportedError) as raised:
            async with model.stream(request) as events:
                _ = [event async for event in events]
        await model.aclose()
        await remember_prompt_mode(model, reason=str(raised.value))
        again = OpenAIChatModel("gemma2:2b", provider="ollama", base_url=scripted.base_url)
    assert await mode_of_next_run(again) == "prompt"
