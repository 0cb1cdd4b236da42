"""The system prompt builder: persona, then tools as the mode wants them; the whole prompt logged."""

from __future__ import annotations

import logging

import pytest

import toolbridge.prompting
from toolbridge.errors import UsageError
from toolbridge.parsing import call_format
from toolbridge.prompting import Persona, build_system_prompt, render_calling_convention, render_tool_catalog
from toolbridge.types import ToolSpec

HERMES = call_format("hermes")

PERSONA = Persona(name="Sheets", description="You help with Excel files.", instructions="Answer briefly.")


def test_the_public_names_are_exactly_these() -> None:
    assert set(toolbridge.prompting.__all__) == {
        "CallWriter",
        "Persona",
        "SchemaTarget",
        "build_system_prompt",
        "example_arguments",
        "openai_strict_problems",
        "openai_tool_definitions",
        "render_calling_convention",
        "render_tool",
        "render_tool_catalog",
        "transform_schema",
    }


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        (PERSONA, "You are Sheets. You help with Excel files.\n\nAnswer briefly."),
        (Persona(name="Sheets"), "You are Sheets."),
        (Persona(description="A helper."), "A helper."),
        (Persona(instructions="  Be kind.\n"), "Be kind."),
        (Persona(), ""),
        (None, ""),
    ],
)
@pytest.mark.parametrize("mode", ["prompt", "native"])
def test_without_tools_the_prompt_is_the_persona(persona: Persona | None, expected: str, mode: str) -> None:
    assert build_system_prompt(persona, [], tool_mode=mode) == expected  # type: ignore[arg-type]


def test_prompt_mode_has_persona_then_catalog_then_convention(corpus: list[ToolSpec]) -> None:
    prompt = build_system_prompt(PERSONA, corpus, tool_mode="prompt", dialect=HERMES)
    persona_at = prompt.index("You are Sheets.")
    catalog_at = prompt.index(render_tool_catalog(corpus))
    convention_at = prompt.index(render_calling_convention(corpus, HERMES))
    assert persona_at < catalog_at < convention_at
    for tool in corpus:
        assert f"\n## {tool.name}\n" in prompt


def test_prompt_mode_is_the_default_and_needs_a_dialect(corpus: list[ToolSpec]) -> None:
    default = build_system_prompt(PERSONA, corpus, dialect=HERMES)
    assert default == build_system_prompt(PERSONA, corpus, tool_mode="prompt", dialect=HERMES)
    with pytest.raises(UsageError, match="dialect"):
        build_system_prompt(PERSONA, corpus)


def test_the_convention_is_written_in_the_dialect_given(corpus: list[ToolSpec]) -> None:
    fenced = build_system_prompt(PERSONA, corpus, dialect=call_format("fenced"))
    assert "```tool\nname: " in fenced
    assert "several ```tool blocks in one reply" in fenced
    assert "<tool_call>" not in fenced


def test_native_mode_leaves_the_catalog_to_the_api(corpus: list[ToolSpec]) -> None:
    prompt = build_system_prompt(PERSONA, corpus, tool_mode="native")
    assert prompt.startswith("You are Sheets. You help with Excel files.\n\nAnswer briefly.\n\n# Tools\n")
    assert "## " not in prompt
    assert "<tool_call>" not in prompt
    assert "never invent" in prompt


def test_an_unknown_mode_is_a_mistake(corpus: list[ToolSpec]) -> None:
    with pytest.raises(UsageError, match="unknown tool mode"):
        build_system_prompt(PERSONA, corpus, tool_mode="xml")  # type: ignore[arg-type]


def test_the_full_prompt_is_logged_at_debug_level(
    corpus: list[ToolSpec], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="toolbridge.prompting"):
        prompt = build_system_prompt(PERSONA, corpus, dialect=HERMES)
    [record] = [r for r in caplog.records if r.name == "toolbridge.prompting"]
    assert record.levelno == logging.DEBUG
    assert record.getMessage().endswith(prompt)
    assert f"{len(corpus)} tools" in record.getMessage()


def test_nothing_is_logged_above_debug(corpus: list[ToolSpec], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="toolbridge.prompting"):
        build_system_prompt(PERSONA, corpus, dialect=HERMES)
    assert not [r for r in caplog.records if r.name == "toolbridge.prompting"]
