"""`toolbridge chat`: an interactive conversation with an agent, keeping the history between turns."""

from __future__ import annotations

from rich.markup import escape

from toolbridge.cli._agent_options import AgentOption, ModelOption, YesOption
from toolbridge.cli._common import ConfigOption, JsonOption, VerboseOption, fail, load, setup_logging, stdout
from toolbridge.cli._session import TerminalSession
from toolbridge.cli.app import app
from toolbridge.cli.ask import make_printer
from toolbridge.errors import ToolbridgeError

_EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}


@app.command()
def chat(
    agent: AgentOption = None,
    model: ModelOption = None,
    yes: YesOption = False,
    config: ConfigOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Chat with an agent. Ctrl-C stops the current answer; Ctrl-D or /exit ends the chat."""
    setup_logging(verbose)
    loaded = load(config)
    try:
        with TerminalSession(
            loaded, make_printer(json), agent=agent, model=model, approve_everything=yes
        ) as session:
            if not json:
                name = escape(session.agent.definition.name)
                stdout.print(f"[dim]Chatting with {name} ({escape(session.agent.model.name)}). "
                             "Ctrl-C stops an answer, Ctrl-D or /exit quits.[/]")  # fmt: skip
            while True:
                try:
                    line = stdout.input("[bold]you>[/] " if not json else "")
                except (EOFError, KeyboardInterrupt):
                    break
                if line.strip() in _EXIT_WORDS:
                    break
                if line.strip():
                    session.turn(line)
    except ToolbridgeError as exc:
        fail(str(exc))
