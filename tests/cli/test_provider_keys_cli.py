"""`toolbridge provider-keys` (model providers' keys, read from a hidden prompt or stdin, never argv) and
`toolbridge access-keys` (users' keys of `toolbridge serve`), with `toolbridge keys` as the old name."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from cli_helpers import TOOLBRIDGE, environment, in_process, toolbridge
from terminal import Terminal

from toolbridge.models.provider_profiles import PROFILES

KEY = "sk-test-abcdefghijklmnop-4321"


@pytest.fixture(autouse=True)
def no_provider_keys_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """`list` shows the providers' variables too: the developer's own would show up among the rows."""
    for profile in PROFILES.values():
        if profile.api_key_env:
            monkeypatch.delenv(profile.api_key_env, raising=False)


def keys_file(tmp_path: Path) -> Path:
    return tmp_path / "data-home" / "toolbridge" / "provider-keys.json"


def test_a_key_piped_in_is_stored_owner_only_and_listed_masked(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "provider-keys", "set", "claude", stdin=KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert "Stored the key for anthropic" in done.stderr
    assert KEY not in done.stdout + done.stderr
    path = keys_file(tmp_path)
    assert json.loads(path.read_text())["anthropic"] == KEY
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    listed = toolbridge(tmp_path, "provider-keys", "list")
    assert listed.returncode == 0, listed.stderr
    assert "anthropic" in listed.stdout
    assert "…4321" in listed.stdout
    assert str(path) in listed.stdout
    assert KEY not in listed.stdout
    as_json = json.loads(toolbridge(tmp_path, "provider-keys", "list", "--json").stdout)
    assert as_json["keys"] == [{"provider": "anthropic", "key": "…4321", "from": "stored", "stored": True}]
    assert toolbridge(tmp_path, "provider-keys", "path").stdout.strip() == str(path)

    removed = toolbridge(tmp_path, "provider-keys", "remove", "anthropic")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(path.read_text()) == {"//": json.loads(path.read_text())["//"]}
    again = toolbridge(tmp_path, "provider-keys", "remove", "anthropic")
    assert (again.returncode, "no key is stored for anthropic" in again.stderr) == (1, True)


def test_a_key_on_the_command_line_is_refused_so_it_stays_out_of_shell_history(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "provider-keys", "set", "openai", KEY)
    assert done.returncode == 1
    assert "not on the command line" in done.stderr
    assert "shell's history" in done.stderr
    assert KEY not in done.stderr
    assert not keys_file(tmp_path).exists()


def test_an_unknown_provider_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "provider-keys", "set", "opnai", stdin=KEY)
    assert done.returncode == 1
    assert "unknown provider 'opnai'; providers: anthropic, deepseek" in done.stderr
    assert not keys_file(tmp_path).exists()


def test_the_environment_variable_wins_and_list_says_so(tmp_path: Path) -> None:
    toolbridge(tmp_path, "provider-keys", "set", "deepseek", stdin=KEY)
    env = {"XDG_DATA_HOME": str(tmp_path / "data-home"), "DEEPSEEK_API_KEY": "sk-from-the-environment-9999"}
    listed = json.loads(in_process("provider-keys", "list", "--json", env=env).stdout)["keys"]
    assert listed == [
        {"provider": "deepseek", "key": "…9999", "from": "$DEEPSEEK_API_KEY (used first; a stored key too)",
         "stored": True}
    ]  # fmt: skip


@pytest.mark.slow
def test_on_a_terminal_the_key_is_asked_for_and_not_shown(tmp_path: Path) -> None:
    command = [*TOOLBRIDGE, "provider-keys", "set", "openai"]
    with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
        terminal.expect("API key for openai (not shown): ")
        terminal.type(KEY)
        assert terminal.wait() == 0, terminal.shown
        assert KEY not in terminal.shown
        assert "Stored the key for openai" in terminal.shown
    assert json.loads(keys_file(tmp_path).read_text())["openai"] == KEY


def test_access_keys_is_the_users_keys_command_and_keys_its_old_name(tmp_path: Path) -> None:
    added = toolbridge(tmp_path, "users", "add", "alice")
    assert "toolbridge access-keys create --user alice" in added.stdout
    created = toolbridge(tmp_path, "access-keys", "create", "--user", "alice")
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith("tbk_")
    assert "toolbridge keys" not in created.stderr

    old = toolbridge(tmp_path, "keys", "list", "--json")
    assert old.returncode == 0, old.stderr
    assert [key["user"] for key in json.loads(old.stdout)] == ["alice"]
    notes = [line for line in old.stderr.splitlines() if line.strip()]
    assert notes == [
        "note: `toolbridge keys` is now `toolbridge access-keys` (model providers' keys: `toolbridge provider-keys`)"
    ]
    listed = toolbridge(tmp_path, "--help").stdout
    assert "access-keys" in listed
    assert "provider-keys" in listed
    assert not [line for line in listed.splitlines() if line.strip().startswith(("keys ", "│ keys "))]
