"""Keys stored with `toolbridge provider-keys set`: used after the config's api_key and the environment
variable, kept owner-only, and named in every message that says where a key may come from."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from toolbridge.errors import ConfigError
from toolbridge.models import Provider
from toolbridge.models.provider_keys import (
    KEYS_FILE_ENV,
    STORED_KEY_SOURCE,
    provider_keys_file,
    remove_provider_key,
    store_provider_key,
    stored_provider_keys,
)

STORED = "sk-stored-0123456789"


@pytest.fixture
def keys_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "private" / "provider-keys.json"
    monkeypatch.setenv(KEYS_FILE_ENV, str(path))
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("MOONSHOT_API_KEY", raising=False)
    return path


def test_a_stored_key_is_used_when_neither_the_config_nor_the_environment_has_one(
    keys_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert store_provider_key("deepseek", f"  {STORED}\n") == "deepseek"
    stored = Provider("deepseek")
    assert (stored.api_key, stored.api_key_from) == (STORED, STORED_KEY_SOURCE)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-from-env")
    from_env = Provider("deepseek")
    assert (from_env.api_key, from_env.api_key_from) == (
        "sk-from-env",
        "the DEEPSEEK_API_KEY environment variable",
    )
    assert Provider("deepseek", api_key="sk-configured").api_key == "sk-configured"


def test_the_file_is_owner_only_and_its_folder_too(keys_file: Path) -> None:
    store_provider_key("claude", STORED)  # an alias: kept under the provider's name
    assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(keys_file.parent.stat().st_mode) == 0o700
    assert json.loads(keys_file.read_text())["anthropic"] == STORED
    assert [path.name for path in keys_file.parent.iterdir()] == [keys_file.name]  # no temporary left


def test_a_missing_key_names_every_place_it_may_come_from(keys_file: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        Provider("moonshot")
    assert "`toolbridge provider-keys set moonshot`" in str(raised.value)
    assert "MOONSHOT_API_KEY" in str(raised.value)
    assert "api_key" in str(raised.value)


def test_removing_forgets_only_that_providers_key(keys_file: Path) -> None:
    store_provider_key("openai", STORED)
    store_provider_key("deepseek", STORED + "x")
    assert remove_provider_key("openai") is True
    assert remove_provider_key("openai") is False
    assert stored_provider_keys() == {"deepseek": STORED + "x"}


def test_an_unknown_provider_is_refused_with_the_known_ones(keys_file: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"unknown provider 'opnai'; providers: anthropic, deepseek, .*openai"
    ):
        store_provider_key("opnai", STORED)
    assert not keys_file.exists()


@pytest.mark.parametrize("key", ["", "   ", "sk-one two", "sk-\x1b[31m"])
def test_a_key_no_api_would_take_is_not_stored(keys_file: Path, key: str) -> None:
    with pytest.raises(ConfigError, match="nothing was stored"):
        store_provider_key("openai", key)
    assert not keys_file.exists()


def test_a_damaged_file_is_an_error_saying_what_to_do_not_an_empty_one(keys_file: Path) -> None:
    keys_file.parent.mkdir()
    keys_file.write_text("{not json")
    with pytest.raises(ConfigError, match=r"cannot be read .*remove it and store the keys again"):
        store_provider_key("openai", STORED)
    assert keys_file.read_text() == "{not json"  # nothing it held was written over
    with pytest.raises(ConfigError, match="provider keys file"):
        Provider("deepseek")


def test_the_default_file_is_in_the_user_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEYS_FILE_ENV, raising=False)
    assert provider_keys_file().parent.name == "toolbridge"
    assert provider_keys_file().name == "provider-keys.json"


def test_with_no_model_configured_a_stored_openai_key_picks_openai(
    keys_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbridge.models import resolve_model

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    store_provider_key("openai", STORED)
    model = resolve_model()
    assert (model.profile.name, model.provider.api_key_from) == ("openai", STORED_KEY_SOURCE)  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_the_stored_key_is_what_the_request_carries(
    keys_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2

    from toolbridge.models import ModelRequest, OpenAIChatModel, TextDelta
    from toolbridge.testing import ScriptedModelServer, Turn
    from toolbridge.types import UserMessage

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store_provider_key("openai", STORED)
    sent: list[str] = []

    async def record(request: httpx2.Request) -> None:
        sent.append(request.headers["authorization"])

    async with (
        httpx2.AsyncClient(event_hooks={"request": [record]}) as client,
        ScriptedModelServer([Turn.text("hello")]) as server,
    ):
        provider = Provider("openai", base_url=server.base_url, http_client=client, max_retries=0)
        model = OpenAIChatModel("gpt-test", provider=provider)
        async with model.stream(ModelRequest(messages=[UserMessage(content="hi")])) as events:
            text = "".join([event.text async for event in events if isinstance(event, TextDelta)])
    assert (text, sent) == ("hello", [f"Bearer {STORED}"])
