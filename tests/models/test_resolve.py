"""Resolving a model name: the config's `models` section, inline `provider:model`, `demo`, the defaults.

Ollama is probed over real HTTP: a tiny server answering `/api/tags` on a free port, found through
`$OLLAMA_HOST` as Ollama itself reads it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import toolbridge.models.resolve as resolve_module
from toolbridge.config import load_config, parse_config
from toolbridge.errors import ConfigError
from toolbridge.models import (
    AnthropicModel,
    DemoModel,
    Model,
    ModelRequest,
    ModelSettings,
    OpenAIChatModel,
    resolve_model,
    resolve_model_async,
)
from toolbridge.server._uvicorn import BackgroundServer
from toolbridge.testing import ScriptedModelServer, Turn
from toolbridge.types import UserMessage

OllamaServer = Callable[[list[str]], str]


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[OllamaServer]:
    """`ollama(["qwen3:8b", ...])` starts a fake Ollama listing those models and points OLLAMA_HOST at it."""
    servers: list[BackgroundServer] = []

    def start(models: list[str]) -> str:
        async def tags(_: Request) -> JSONResponse:
            return JSONResponse({"models": [{"name": name, "model": name, "size": 1} for name in models]})

        server = BackgroundServer(Starlette(routes=[Route("/api/tags", tags)]))
        server.start()
        servers.append(server)
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
        return f"http://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def nothing_local(monkeypatch: pytest.MonkeyPatch, unused_port: int) -> None:
    """No Ollama: OLLAMA_HOST points at a port nothing listens on."""
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{unused_port}")


def write_config(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "toolbridge.json"
    path.write_text(json.dumps(document))
    return path


FAST = {
    "provider": "deepseek",
    "model": "deepseek-chat",
    "api_key": "${DEEPSEEK_API_KEY}",
    "tool_mode": "auto",
    "temperature": 0.2,
    "max_tokens": 2048,
}


# -- the config's models section ----------------------------------------------------------------------


def test_the_default_model_is_built_from_its_config_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-secret")
    config = load_config(write_config(tmp_path, {"models": {"fast": FAST}, "default_model": "fast"}))
    model = resolve_model(None, config)
    assert isinstance(model, OpenAIChatModel)
    assert (model.name, model.model_id, model.profile.name) == ("fast", "deepseek-chat", "deepseek")
    assert model.base_url == "https://api.deepseek.com"
    assert model.settings == ModelSettings(temperature=0.2, max_tokens=2048)
    assert model.tool_mode == "auto"
    assert "sk-deepseek-secret" not in repr(model)


@pytest.mark.anyio
async def test_a_configured_model_sends_its_settings_to_its_base_url() -> None:
    async with ScriptedModelServer([Turn.text("hi")]) as scripted:
        entry = {**FAST, "provider": "vllm", "base_url": scripted.base_url, "api_key": "k", "max_retries": 0}
        model = resolve_model("local", parse_config({"models": {"local": entry}}))
        async with model.stream(ModelRequest([UserMessage(content="hello")])) as events:
            _ = [event async for event in events]
        assert isinstance(model, OpenAIChatModel)
        await model.aclose()
        body = scripted.requests[0].body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("deepseek-chat", 0.2, 2048)


def test_a_model_entry_may_turn_tool_search_off_or_on() -> None:
    entries = {
        "off": {"provider": "ollama", "model": "qwen3", "tool_search": False},
        "plain": {"provider": "ollama", "model": "qwen3"},
        "demo": {"provider": "demo"},
        "searching-demo": {"provider": "demo", "tool_search": True},
    }
    config = parse_config({"models": entries})
    assert resolve_model("off", config).tool_search is False
    assert resolve_model("plain", config).tool_search is None  # the agent's choice, else auto
    assert resolve_model("demo", config).tool_search is False  # its rules cannot search
    assert resolve_model("searching-demo", config).tool_search is True


def test_the_only_configured_model_is_the_default() -> None:
    config = parse_config({"models": {"mine": {"provider": "ollama", "model": "qwen3"}}})
    model = resolve_model(None, config)
    assert model.name == "mine"


@pytest.mark.parametrize(
    ("entry", "key", "words"),
    [
        ({"provider": "openia", "model": "gpt-4o"}, "models.fast.provider", "unknown provider 'openia'"),
        ({"provider": "openai"}, "models.fast.model", '"model" is required'),
        ({**FAST, "temperature": 5}, "models.fast.temperature", "less than or equal to 2"),
        ({**FAST, "tool_mode": "sometimes"}, "models.fast.tool_mode", "'native', 'prompt', 'auto' or 'code'"),
        ({**FAST, "temprature": 0.2}, "models.fast.temprature", "unknown key; did you mean 'temperature'?"),
        ("deepseek-chat", "models.fast", "expected an object"),
    ],
)
def test_invalid_entries_name_the_file_the_model_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: Any, key: str, words: str
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    path = write_config(tmp_path, {"models": {"fast": entry}})
    with pytest.raises(ConfigError) as raised:
        resolve_model("fast", load_config(path))
    assert raised.value.path == str(path)
    assert raised.value.key == key
    assert words in str(raised.value)


def test_a_missing_key_names_the_entry_and_the_variable(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"models": {"fast": {"provider": "deepseek", "model": "deepseek-chat"}}})
    with pytest.raises(ConfigError) as raised:
        resolve_model("fast", load_config(path))
    assert raised.value.key == "models.fast.api_key"
    assert str(raised.value).startswith(f"{path}: models.fast.api_key: model 'fast' needs an API key")
    assert "DEEPSEEK_API_KEY" in str(raised.value)


def test_an_unset_key_of_one_model_stops_only_that_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    entry = {"provider": "deepseek", "model": "deepseek-chat", "api_key": "${DEEPSEEK_API_KEY}"}
    path = write_config(tmp_path, {"models": {"fast": entry}, "default_model": "fast"})
    config = load_config(path)
    assert isinstance(resolve_model("demo", config), DemoModel)
    with pytest.raises(ConfigError) as raised:
        resolve_model(None, config)
    assert raised.value.key == "models.fast.api_key"
    assert str(raised.value).startswith(
        f"{path}: models.fast.api_key: environment variable 'DEEPSEEK_API_KEY' is not set "
        "(model 'fast' uses it); set it, or give a default with ${DEEPSEEK_API_KEY:-value}"
    )


def test_an_unknown_name_lists_the_configured_ones() -> None:
    config = parse_config({"models": {"fast": {"provider": "ollama", "model": "qwen3"}}})
    with pytest.raises(
        ConfigError, match=r"no model named 'slow' \(configured models: fast\).*provider:model"
    ):
        resolve_model("slow", config)


# -- inline provider:model ------------------------------------------------------------------------------


def test_inline_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = resolve_model("openai:gpt-4o-mini")
    assert isinstance(model, OpenAIChatModel)
    assert (model.name, model.model_id, model.base_url) == (
        "openai:gpt-4o-mini",
        "gpt-4o-mini",
        "https://api.openai.com/v1",
    )


def test_inline_ollama_keeps_the_tag_and_honours_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11500")
    model = resolve_model("ollama:qwen3:8b")
    assert isinstance(model, OpenAIChatModel)
    assert (model.model_id, model.base_url) == ("qwen3:8b", "http://127.0.0.1:11500/v1")


def test_inline_anthropic_and_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert isinstance(resolve_model("anthropic:claude-sonnet-4-5"), AnthropicModel)
    lm_studio = resolve_model("lm-studio:qwen2.5-7b-instruct")
    assert isinstance(lm_studio, OpenAIChatModel)
    assert lm_studio.profile.name == "lmstudio"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("grok:grok-4", "unknown provider 'grok'"),
        ("deepseek:", "names no model id"),
        ("deepseek", "names no model id"),
    ],
)
def test_malformed_inline_names_say_how_to_write_them(name: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        resolve_model(name)


def test_an_inline_model_without_its_key_says_which_variable() -> None:
    with pytest.raises(ConfigError, match=r"set the MOONSHOT_API_KEY environment variable"):
        resolve_model("moonshot:kimi-k2")


# -- demo --------------------------------------------------------------------------------------------------


def test_demo_is_used_when_named_even_with_real_models_configured() -> None:
    config = parse_config(
        {"models": {"fast": {"provider": "ollama", "model": "qwen3"}}, "default_model": "fast"}
    )
    assert isinstance(resolve_model("demo", config), DemoModel)
    assert not isinstance(resolve_model(None, config), DemoModel)


@pytest.mark.usefixtures("nothing_local")
def test_demo_is_never_chosen_silently() -> None:
    with pytest.raises(ConfigError):
        resolve_model(None, parse_config({}))


# -- defaults from the environment ---------------------------------------------------------------------


@pytest.mark.usefixtures("nothing_local")
def test_with_nothing_configured_openai_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    model = resolve_model()
    assert isinstance(model, OpenAIChatModel)
    assert (model.profile.name, model.model_id) == ("openai", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4.1")
    assert isinstance(model := resolve_model(), OpenAIChatModel)
    assert model.model_id == "gpt-4.1"


def test_openai_base_url_points_at_another_server_whose_first_model_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with ScriptedModelServer(model_name="local-llama") as scripted:
        monkeypatch.setenv("OPENAI_BASE_URL", scripted.base_url)
        model = resolve_model()
    assert isinstance(model, OpenAIChatModel)
    assert (model.model_id, model.base_url, model.profile.name) == (
        "local-llama",
        scripted.base_url,
        "openai-compatible",
    )


def test_a_local_ollama_is_found_and_a_tool_capable_model_picked(ollama: OllamaServer) -> None:
    host = ollama(["nomic-embed-text:latest", "llama2:7b", "qwen3:8b", "llama3.1:8b"])
    model = resolve_model()
    assert isinstance(model, OpenAIChatModel)
    assert (model.profile.name, model.model_id, model.base_url) == ("ollama", "qwen3:8b", f"{host}/v1")
    assert model.name == "ollama:qwen3:8b"
    assert resolve_model("ollama").name == "ollama:qwen3:8b"  # a bare `ollama` asks it too


def test_any_chat_model_is_better_than_none(ollama: OllamaServer) -> None:
    ollama(["nomic-embed-text:latest", "phi3:mini"])
    assert isinstance(model := resolve_model(), OpenAIChatModel)
    assert model.model_id == "phi3:mini"


def test_an_ollama_without_models_says_to_pull_one(ollama: OllamaServer) -> None:
    ollama([])
    with pytest.raises(ConfigError, match=r"has no chat models: fetch one with `ollama pull qwen3`"):
        resolve_model()


@pytest.mark.usefixtures("nothing_local")
def test_with_nothing_at_all_the_error_shows_how_to_configure_a_model() -> None:
    with pytest.raises(ConfigError) as raised:
        resolve_model()
    message = str(raised.value)
    assert '"models": {' in message
    assert '"fast": {"provider": "openai", "model": "gpt-4o-mini", "api_key": "${OPENAI_API_KEY}"}' in message
    assert '"default_model": "fast"' in message
    assert "OPENAI_API_KEY" in message
    assert "OPENAI_BASE_URL" in message
    assert "OLLAMA_HOST" in message
    assert "--model openai:gpt-4o-mini" in message
    assert "--model demo" in message
    # The snippet is valid JSON once cut out of the message.
    start = message.index("{")
    end = message.index("}", message.index('"default_model"')) + 1
    assert json.loads(message[start:end])["default_model"] == "fast"


@pytest.mark.anyio
async def test_the_event_loop_keeps_serving_while_a_slow_ollama_is_probed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fake Ollama answers only once this test's loop has run a task during the probe; a probe that
    # held the loop would wait for its timeout, find nothing, and raise.
    asked, answer = threading.Event(), threading.Event()

    async def slow_tags(_: Request) -> JSONResponse:
        asked.set()
        await anyio.to_thread.run_sync(answer.wait)
        return JSONResponse({"models": [{"name": "qwen3:8b"}]})

    server = BackgroundServer(Starlette(routes=[Route("/api/tags", slow_tags)]))
    server.start()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
    monkeypatch.setattr(resolve_module, "_PROBE_TIMEOUT", 10.0)
    found: list[Model] = []
    try:
        async with anyio.create_task_group() as tasks:

            async def probe() -> None:
                found.append(await resolve_model_async())

            tasks.start_soon(probe)
            await anyio.to_thread.run_sync(asked.wait)
            answer.set()  # runs only if the loop is free while the probe waits
    finally:
        answer.set()
        server.stop()
    assert [model.name for model in found] == ["ollama:qwen3:8b"]
