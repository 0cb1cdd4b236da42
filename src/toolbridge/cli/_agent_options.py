"""Options shared by the commands that talk to an agent (`ask`, `chat`)."""

from __future__ import annotations

from typing import Annotated

import typer

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
