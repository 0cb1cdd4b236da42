"""The commands a chat understands between questions: /help, /tools, /model, /roots, /logs, /clear,
/prompts, /prompt, /exit."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from rich.markup import escape

from toolbridge.cli._chat_resources_and_prompts import list_prompts, send_prompt
from toolbridge.cli._common import stderr, stdout
from toolbridge.cli._session import TerminalSession
from toolbridge.errors import ToolbridgeError

__all__ = ["COMMANDS", "EXIT", "is_chat_command", "run_chat_command"]

EXIT = "exit"
"""What `run_chat_command` returns when the chat should end."""

_HELP = {
    "/help": "this list",
    "/tools": "the tools the agent can use",
    "/model [NAME]": "the model answering; with NAME, switch to it (as --model takes it)",
    "/roots [PATH ...]": "the folders servers may work in; with PATHs, change them (servers are told)",
    "/logs SERVER": "the last messages SERVER logged to toolbridge",
    "/clear": "start a new conversation (a new stored chat)",
    "/prompts": "the servers' prompts and their arguments",
    "/prompt NAME [key=value ...]": "send a server's prompt (its messages start or continue the chat)",
    "@server:uri": "in a message: attach that resource (Tab completes servers, URIs and prompts)",
    "/exit": "end the chat (also /quit or Ctrl-D)",
}


COMMANDS = ["/help", "/tools", "/model", "/roots", "/clear", "/prompts", "/prompt", "/exit", "/quit"]
"""Every command, for Tab completion."""


def is_chat_command(line: str) -> bool:
    """`/tools` is a command; `/etc/hosts: what is in it?` is a question about a path."""
    word = line.strip().split(" ", 1)[0]
    return word.startswith("/") and "/" not in word[1:] and len(word) > 1


def run_chat_command(session: TerminalSession, line: str) -> str | None:
    """Run `line` if it is a chat command; EXIT to end the chat, None to go on."""
    word, _, argument = line.strip().partition(" ")
    commands: dict[str, Callable[[TerminalSession, str], str | None]] = {
        "/help": _help,
        "/tools": _tools,
        "/model": _model,
        "/roots": _roots,
        "/logs": _logs,
        "/clear": _clear,
        "/prompts": list_prompts,
        "/prompt": send_prompt,
        "/exit": _exit,
        "/quit": _exit,
    }
    command = commands.get(word.lower())
    if command is None:
        stderr.print(f"unknown command {escape(word)!r}; /help lists the commands.", markup=False)
        return None
    return command(session, argument.strip())


def _help(session: TerminalSession, argument: str) -> None:
    for usage, what in _HELP.items():
        stdout.print(f"  [bold]{escape(usage)}[/]  {escape(what)}")


def _tools(session: TerminalSession, argument: str) -> None:
    specs = session.tools()
    if not specs:
        stdout.print("This agent has no tools.")
    for spec in specs:
        summary = spec.description.strip().splitlines()[0] if spec.description.strip() else ""
        stdout.print(f"  [bold]{escape(spec.name)}[/] [dim]({escape(spec.source)})[/]  {escape(summary)}")


def _model(session: TerminalSession, argument: str) -> None:
    if argument:
        try:
            session.switch_model(argument)
        except ToolbridgeError as exc:
            stderr.print(f"[bold red]error:[/] {escape(str(exc))}")
            return
    stdout.print(f"model: [bold]{escape(session.agent.model.name)}[/]")


def _roots(session: TerminalSession, argument: str) -> None:
    try:
        roots = session.set_roots(shlex.split(argument)) if argument else session.roots()
    except (ToolbridgeError, ValueError) as exc:
        stderr.print(f"[bold red]error:[/] {escape(str(exc))}")
        return
    stdout.print("roots: " + (escape(", ".join(roots)) if roots else "none"))


def _logs(session: TerminalSession, argument: str) -> None:
    if not argument:
        stderr.print(
            "usage: /logs SERVER (the server's name, as `toolbridge servers` lists it)", markup=False
        )
        return
    try:
        entries = session.server_logs(argument)
    except ToolbridgeError as exc:
        stderr.print(f"[bold red]error:[/] {escape(str(exc))}")
        return
    for entry in entries:
        stdout.print(f"  {entry.describe()}", markup=False, highlight=False)
    if not entries:
        stdout.print(f"Server {argument!r} has logged no messages to toolbridge.", markup=False)


def _clear(session: TerminalSession, argument: str) -> None:
    session.clear()
    stdout.print("[dim]Cleared: the next question starts a new chat.[/]")


def _exit(session: TerminalSession, argument: str) -> str:
    return EXIT
