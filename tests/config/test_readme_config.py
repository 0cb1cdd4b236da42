"""The configuration page's example works as written: unset variables of sections a command does not use
(the `fast` model's key, the `search` server's token) do not stop `ask --model demo`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import toolbridge

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
SOURCE = Path(toolbridge.__file__).resolve().parents[1]


def config_page_example() -> str:
    section = PAGE.read_text(encoding="utf-8").split("## An example", 1)[1]
    found = re.search(r"```json\n(.*?)```", section, re.DOTALL)
    assert found, "docs/configuration.md's example section has no ```json example"
    return found.group(1)


def test_the_config_page_example_is_the_one_with_unset_variables() -> None:
    example = config_page_example()
    assert "${DEEPSEEK_API_KEY}" in example
    assert json.loads(example)["default_model"] == "fast"


def test_ask_with_the_demo_model_works_with_the_config_page_example_in_a_clean_environment(
    tmp_path: Path,
) -> None:
    (tmp_path / "toolbridge.json").write_text(config_page_example(), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    # Nothing from this machine: no API keys, no user config or database, and only the Python that
    # runs toolbridge on the PATH (so the example's `uvx` servers fail at once, as on a fresh machine).
    clean = {"PATH": str(Path(sys.executable).parent), "HOME": str(home), "PYTHONPATH": str(SOURCE)}
    finished = subprocess.run(
        [sys.executable, "-m", "toolbridge", "ask", "--model", "demo", "What is 15 + 27?"],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert "15 + 27 = 42" in finished.stdout
    assert "DEEPSEEK_API_KEY" not in finished.stderr
