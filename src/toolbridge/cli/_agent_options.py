"""Options shared by the commands that talk to an agent (`ask`, `chat`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from toolbridge.cli._common import fail

AgentOption = Annotated[
    str | None,
    typer.Option("--agent", "-a", help="Agent from the config's 'agents' section (default: default)."),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="Model: a name from the config's 'models', provider:model (e.g. ollama:qwen3), or demo.",
    ),
]
ContinueOption = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the last chat (`toolbridge history` lists them).")
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call without asking.")]
SystemOption = Annotated[
    str | None,
    typer.Option(
        "--system", "-s", help="Instructions for this run, in place of the agent's own.", show_default=False
    ),
]
ModelOptionsOption = Annotated[
    list[str] | None,  # KEY VALUE pairs in fact: see `PairedOptions`
    typer.Option(
        "--option",
        "-o",
        metavar="KEY VALUE",
        help="A model option for this run, e.g. -o temperature 0.2 (repeat; also max_tokens, top_p, seed).",
        show_default=False,
    ),
]


class PairedOptions(TyperCommand):
    """A command whose `-o` takes two words, as `llm -o temperature 0.2` does. Typer has no repeated
    pairs, so the option is made one here: two words each time, kept as (key, value) tuples."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for parameter in self.params:
            if parameter.name == "option":
                parameter.nargs = 2
                parameter.process_value = lambda _ctx, value: [tuple(pair) for pair in value or ()]  # type: ignore[method-assign,assignment]


_MODEL_OPTIONS: dict[str, type] = {"temperature": float, "max_tokens": int, "top_p": float, "seed": int}
"""What `-o` sets: the model's own settings (`ModelSettings`), by the names a config's model entry uses."""


def model_options(given: Sequence[Sequence[str]] | None) -> dict[str, Any]:
    """`-o KEY VALUE` pairs as settings; an unknown key or a value of the wrong kind exits with the ones
    that exist."""
    options: dict[str, Any] = {}
    for key, value in given or []:
        kind = _MODEL_OPTIONS.get(key)
        if kind is None:
            fail(f"-o {key}: unknown model option; use one of {', '.join(_MODEL_OPTIONS)}")
        try:
            options[key] = kind(value)
        except ValueError:
            fail(f"-o {key} {value}: expected {'a number' if kind is float else 'a whole number'}")
    return options
