"""The README's config example works as written: unset variables of sections a command does not use
(the `fast` model's key, the `search` server's token) do not stop `ask --model demo`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import toolbridge

README = Path(__file__).resolve().parents[2] / "README.md"
SOURCE = Path(toolbridge.__file__).resolve().parents[1]


def readme_config_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Configuration", 1)[1]
    found = re.search(r"```json\n(.*?)```", section, re.DOTALL)
    assert found, "README.md's Configuration section has no ```json example"
    return found.group(1)


def test_the_readme_config_example_is_the_one_with_unset_variables() -> None:
    example = readme_config_example()
    assert "${DEEPSEEK_API_KEY}" in example
    assert json.loads(example)["default_model"] == "fast"


def test_ask_with_the_demo_model_works_with_the_readme_config_in_a_clean_environment(tmp_path: Path) -> None:
    (tmp_path / "toolbridge.json").write_text(readme_config_example(), encoding="utf-8")
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
