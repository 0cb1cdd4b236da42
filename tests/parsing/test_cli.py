"""`toolbridge parse`: a thin skin over `parse()`, printing JSON."""

from __future__ import annotations

import json
from pathlib import Path

from parsing_cases import SEED_001_CALCULATE, SEED_002_OUTPUT
from typer.testing import CliRunner

from toolbridge.cli.commands import app
from toolbridge.parsing import available_formats, parse

runner = CliRunner()


def test_parse_a_file_prints_what_parse_sees(tmp_path: Path) -> None:
    path = tmp_path / "output.txt"
    path.write_text(SEED_002_OUTPUT, encoding="utf-8")
    result = runner.invoke(app, ["parse", str(path)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == parse(SEED_002_OUTPUT).to_dict()
    assert json.loads(result.stdout)["tool_calls"][0]["name"] == "read_data_from_excel"


def test_parse_reads_stdin_and_honours_the_format() -> None:
    result = runner.invoke(app, ["parse"], input=SEED_001_CALCULATE)
    assert json.loads(result.stdout)["tool_calls"][0]["arguments"] == {"expression": "15 + 27"}
    result = runner.invoke(app, ["parse", "--format", "hermes"], input=SEED_001_CALCULATE)
    data = json.loads(result.stdout)
    assert (data["content"], data["tool_calls"]) == (SEED_001_CALCULATE, [])


def test_parse_shows_reasoning_and_errors() -> None:
    result = runner.invoke(app, ["parse"], input="plan</think>ok<tool_call>oops!</tool_call>")
    data = json.loads(result.stdout)
    assert (data["reasoning"], data["content"]) == ("plan", "ok")
    assert data["errors"][0]["raw"] == "<tool_call>oops!</tool_call>"
    result = runner.invoke(app, ["parse", "--reasoning-closed"], input="plan</think>ok")
    assert json.loads(result.stdout)["content"] == "planok"
    result = runner.invoke(app, ["parse", "--reasoning-open"], input="plan")  # a hint: the output decides
    assert (json.loads(result.stdout)["reasoning"], json.loads(result.stdout)["content"]) == ("", "plan")


def test_parse_truncated_reports_a_cut_off_call_and_runs_none() -> None:
    cut = '<tool_call>{"name": "save", "arguments": {"text": "half'
    result = runner.invoke(app, ["parse", "--truncated"], input=cut)
    data = json.loads(result.stdout)
    assert data["tool_calls"] == []
    assert "token limit" in data["errors"][0]["message"]
    untold = json.loads(runner.invoke(app, ["parse"], input=cut).stdout)  # cut short all the same
    assert untold["tool_calls"] == []
    assert "ends inside a string" in untold["errors"][0]["message"]


def test_parse_formats_lists_every_dialect_with_its_markers_and_models() -> None:
    result = runner.invoke(app, ["parse", "--formats"])
    assert result.exit_code == 0, result.output
    names = [line.split()[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert names == available_formats()
    assert "[TOOL_CALLS]" in result.stdout
    assert "models: mistral*" in result.stdout


def test_parse_types_values_by_the_tools_given(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tools.write_text(json.dumps([{"name": "f", "inputSchema": schema}]), encoding="utf-8")
    call = "<tool_call>\n<function=f>\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"
    result = runner.invoke(app, ["parse", "--tools", str(tools)], input=call)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tool_calls"][0]["arguments"] == {"n": 3}
    result = runner.invoke(app, ["parse"], input=call)
    assert json.loads(result.stdout)["tool_calls"][0]["arguments"] == {"n": "3"}
    tools.write_text("[1, 2]", encoding="utf-8")
    result = runner.invoke(app, ["parse", "--tools", str(tools)], input="hi")
    assert result.exit_code == 1
    assert "inputSchema" in result.stderr


def test_parse_refuses_an_unknown_format_and_a_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["parse", "--format", "nope"], input="x")
    assert result.exit_code == 1
    assert "unknown format" in result.stderr
    result = runner.invoke(app, ["parse", str(tmp_path / "missing.txt")])
    assert result.exit_code == 1
    assert "cannot read" in result.stderr
