"""The terminal's answers to servers' requests: approving sampling, filling in an elicitation's form,
opening the page a URL elicitation names. Asked inline, like tool approvals."""

from __future__ import annotations

import os
import sys
import webbrowser
from typing import Literal

import mcp_types as mcp
from rich.console import Console
from rich.markup import escape
from rich.prompt import Confirm

from toolbridge.agent.asking import ElicitationRequest, NobodyToAsk, SamplingRequest
from toolbridge.agent.server_requests import ServerRequests
from toolbridge.cli._common import stderr, stdout
from toolbridge.cli._render import EventPrinter, JsonEventPrinter, TerminalRenderer
from toolbridge.config import Config
from toolbridge.mcp.elicitation_form import ElicitationForm, FormError, FormValue
from toolbridge.tools.approval import Approver, approve_all

__all__ = ["TerminalAnswers", "TerminalAsker"]

Action = Literal["accept", "decline", "cancel"]
_ACTIONS: dict[str, Action] = {
    "y": "accept",
    "yes": "accept",
    "n": "decline",
    "no": "decline",
    "c": "cancel",
    "cancel": "cancel",
}


class TerminalAsker:
    """Asks on the terminal. `approve_everything` (`--yes`) approves sampling, but answers no form:
    with `json_output` (`--json`, for programs) or no terminal on stdin, forms are declined."""

    def __init__(self, printer: EventPrinter, *, approve_everything: bool, json_output: bool) -> None:
        self.printer = printer
        self.approve_everything = approve_everything
        self.json_output = json_output

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        if self.approve_everything:
            return True
        if not sys.stdin.isatty():
            raise NobodyToAsk("stdin is not a terminal to ask on (pass --yes to allow it)")
        return await self.printer.ask(lambda console: _approve_sampling(console, request))

    async def elicit(self, request: ElicitationRequest) -> mcp.ElicitResult:
        if self.json_output:
            raise NobodyToAsk("toolbridge runs with --json, for programs")
        if not sys.stdin.isatty():
            raise NobodyToAsk("stdin is not a terminal to ask on")
        if request.form is not None:
            form = request.form
            return await self.printer.ask(lambda console: _fill_in(console, request, form))
        return await self.printer.ask(lambda console: _open_url(console, request))

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        self.printer.note(f"✓ server {server!r}: the step in the browser is complete")


class TerminalAnswers:
    """Questions answered here, outside an agent (`toolbridge call`): servers' requests (sampling by the
    default model or the server's, forms on this terminal, roots the current folder) and tool approvals
    (`approver`). `approve_everything` (`--yes`) approves tool calls and sampling unasked."""

    def __init__(self, config: Config, *, approve_everything: bool, json_output: bool) -> None:
        self.printer = JsonEventPrinter(stdout, stderr) if json_output else TerminalRenderer(stderr)
        self.approve_everything = approve_everything
        asker = TerminalAsker(self.printer, approve_everything=approve_everything, json_output=json_output)
        self.requests = ServerRequests(config, asker=asker, roots=[os.getcwd()])

    def approver(self) -> Approver | None:
        """Who approves a tool call: everyone (`--yes`), the user on this terminal, or, with no terminal
        on stdin, nobody (calls that need approval are refused as unapproved)."""
        if self.approve_everything:
            return approve_all
        return self.printer.ask_approval if sys.stdin.isatty() else None

    async def aclose(self) -> None:
        self.printer.close()
        await self.requests.aclose()


def _approve_sampling(console: Console, request: SamplingRequest) -> bool:
    console.print(
        f"Server [bold]{escape(request.server)}[/] asks the model [bold]{escape(request.model)}[/] "
        f"for a completion (up to {request.params.max_tokens} tokens):"
    )
    for role, text in request.preview():
        console.print(f"  [dim]{role}:[/] {escape(text)}")
    return Confirm.ask("Allow it?", console=console, default=False)


def _action(console: Console, question: str) -> Action:
    while True:
        typed = (
            console.input(escape(f"{question} [y = yes / n = decline / c = cancel] (y): ")).strip().lower()
        )
        if not typed:
            return "accept"
        if typed in _ACTIONS:
            return _ACTIONS[typed]
        console.print("[red]Type y, n or c.[/]")


def _fill_in(console: Console, request: ElicitationRequest, form: ElicitationForm) -> mcp.ElicitResult:
    console.print(f"Server [bold]{escape(request.server)}[/] asks: {escape(request.message)}")
    action = _action(console, "Answer it?")
    if action != "accept":
        return mcp.ElicitResult(action=action)
    answers: dict[str, FormValue] = {}
    for field in form.fields:
        if field.description:
            console.print(f"  [dim]{escape(field.description)}[/]")
        default = field.shown_default()
        label = f"  {escape(field.title)} ({escape(field.hint())}{', required' if field.required else ''})"
        label += escape(f" [{default}]") if default else ""
        while True:
            try:
                value = field.read(console.input(f"{label}: "))
                break
            except FormError as exc:
                console.print(f"  [red]{escape(str(exc))}[/]")
        if value is not None:
            answers[field.name] = value
    return mcp.ElicitResult(action="accept", content=dict(form.complete(answers)))


def _open_url(console: Console, request: ElicitationRequest) -> mcp.ElicitResult:
    console.print(
        f"Server [bold]{escape(request.server)}[/] asks you to open a page: {escape(request.message)}"
    )
    console.print(f"  {escape(request.url or '')}")
    action = _action(console, "Open it in your browser?")
    if action == "accept":
        if not webbrowser.open(request.url or ""):
            console.print("  No browser could be opened: open the URL above yourself.")
        console.print(f"  Waiting for server {escape(repr(request.server))} to say the step is complete…")
    return mcp.ElicitResult(action=action)
