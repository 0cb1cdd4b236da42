"""`toolbridge resources`, `read` and `prompts`, run in-process against real MCP servers over stdio."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.cli_helpers import in_process_bytes
from toolbridge.config.model import ServerConfig

pytestmark = pytest.mark.slow


@pytest.fixture
def config_file(tmp_path: Path, stdio_server: Callable[..., ServerConfig]) -> Path:
    library, basic = stdio_server("library"), stdio_server("basic")
    servers = {
        "library": {"command": library.command, "args": library.args},
        "basic": {"command": basic.command, "args": basic.args},
    }
    path = tmp_path / "toolbridge.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def toolbridge(*args: str, config: Path) -> subprocess.CompletedProcess[bytes]:
    return in_process_bytes(*args, "--config", str(config))


def test_resources_lists_every_servers_resources_and_templates(config_file: Path) -> None:
    listed = toolbridge("resources", "--json", config=config_file)
    table = toolbridge("resources", config=config_file)

    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert [r["uri"] for r in found["resources"]] == [
        "note://readme",
        "note://todo",
        "image://dot.png",
        "data://table.bin",
    ]
    assert [t["uri_template"] for t in found["templates"]] == ["note://{name}", "shelf://{book}"]
    lines = table.stdout.decode().splitlines()
    assert "library  image://dot.png (image/png)  dot.png" in lines
    assert "library  note://{name} (template, text/plain)  A note by name." in lines


def test_read_prints_text_and_writes_blobs_to_a_file_or_stdout(config_file: Path, tmp_path: Path) -> None:
    text = toolbridge("read", "note://readme", config=config_file)
    from_template = toolbridge("read", "note://todo", "--server", "library", config=config_file)
    matched = toolbridge("read", "shelf://emma", config=config_file)  # the server whose template matches
    refused = toolbridge("read", "image://dot.png", config=config_file)
    image = tmp_path / "dot.png"
    to_file = toolbridge("read", "image://dot.png", "--output", str(image), config=config_file)
    to_stdout = toolbridge("read", "data://table.bin", "--output", "-", config=config_file)

    assert text.stdout.decode() == "Read me first.\n"
    assert from_template.stdout.decode() == "Buy milk.\n"
    assert matched.stdout.decode() == "The book emma.\n"
    assert refused.returncode == 1
    assert b"image://dot.png is binary (image/png, 70 bytes)" in refused.stderr
    assert b"--output FILE" in refused.stderr
    assert to_file.returncode == 0, to_file.stderr
    assert image.read_bytes().startswith(b"\x89PNG")
    assert to_stdout.stdout == bytes(range(10))


def test_read_of_a_resource_nobody_lists_asks_for_the_server(config_file: Path) -> None:
    done = toolbridge("read", "nothing://here", config=config_file)
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"No server lists the resource 'nothing://here'" in done.stderr
    assert b"--server S" in done.stderr


def test_prompts_lists_prompts_with_their_arguments(config_file: Path) -> None:
    listed = toolbridge("prompts", "--json", config=config_file)
    table = toolbridge("prompts", "--server", "library", config=config_file)

    assert listed.returncode == 0, listed.stderr
    review = next(p for p in json.loads(listed.stdout) if p["name"] == "review")
    assert review["server"] == "library"
    assert [(a["name"], a["required"]) for a in review["arguments"]] == [("code", True), ("language", False)]
    assert "library  review  Review a piece of code.\n    code (required)" in table.stdout.decode()
