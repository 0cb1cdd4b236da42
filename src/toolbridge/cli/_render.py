"""Showing an agent's events on a terminal: the answer as Markdown, each tool call live, approvals inline.

On a terminal the answer streams into a live region (rich `Live`) with a spinner per running call;
finished calls and text that preceded them are printed above it for good. When stdout is not a
terminal the same events are printed as plain lines, and `--json` prints the events themselves.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import anyio
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.prompt import Confirm
from rich.spinner import Spinner
from rich.text import Text

from toolbridge.cli._common import stderr
from toolbridge.types import QUALIFIER, ToolCall

if TYPE_CHECKING:
    from toolbridge.agent import AgentEvent, ApprovalRequest, RunResult, ToolCallProgressEvent

__all__ = ["EventPrinter", "JsonEventPrinter", "TerminalRenderer"]

T = TypeVar("T")

_ARGUMENTS_SHOWN = 120
_PROGRESS_REDRAW = 1 / 12
"""Seconds between progress reports drawn at once (the live region's own refresh rate)."""
_RESULT_SHOWN = 160


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_call(call: ToolCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return f"{call.name} {_one_line(arguments, _ARGUMENTS_SHOWN)}"


def progress_label(event: ToolCallProgressEvent) -> str:
    """`excel.read_range 40% reading sheet 2`: the call's server and tool, how far, and what it does."""
    name = event.name.removeprefix(f"{event.server}{QUALIFIER}") if event.server else event.name
    where = f"{event.server}.{name}" if event.server else name
    amount = f"{event.percent}%" if event.percent is not None else f"{event.progress:g}"
    return " ".join(part for part in (where, amount, event.message) if part)


class EventPrinter:
    """The interface the chat session drives: show events, and ask the user about a call."""

    def show(self, event: AgentEvent) -> None:
        raise NotImplementedError

    async def ask_approval(self, request: ApprovalRequest) -> bool:
        raise NotImplementedError

    async def ask(self, question: Callable[[Console], T]) -> T:
        """Run `question` (blocking: it reads stdin) in a worker thread, with the console it may write
        to; nothing else draws meanwhile. Ctrl-C abandons it."""
        return await anyio.to_thread.run_sync(question, stderr, abandon_on_cancel=True)

    def note(self, text: str) -> None:
        """A line about what a server did (e.g. a step it asked for is complete)."""
        stderr.print(Text(text))

    def close(self) -> None:
        """The turn ended (normally or not): leave the terminal tidy."""


async def _confirm(console: Console, request: ApprovalRequest) -> bool:
    if not sys.stdin.isatty():
        stderr.print(
            f"[yellow]not run[/] {escape(describe_call(request.call))}: it needs approval and stdin is not "
            "a terminal to ask on. Pass --yes to approve every call."
        )
        from toolbridge.tools import refusals  # the tools stack: imported when a call needs it

        raise refusals.unapproved(request.tool, request.reason)  # nobody could be asked
    question = f"Run [bold]{escape(describe_call(request.call))}[/]? ({escape(request.reason)})"
    # Abandoned on cancel: Ctrl-C during the question stops the turn at once.
    ask = lambda: Confirm.ask(question, console=console, default=False)  # noqa: E731
    return await anyio.to_thread.run_sync(ask, abandon_on_cancel=True)


class TerminalRenderer(EventPrinter):
    """The answer on `console`; tool calls, notes and questions beside it: on the same terminal, or on
    stderr when `console` is a file or a pipe, so `toolbridge ask ... > answer.txt` holds the answer alone."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.aside = console if console.is_terminal or console.stderr else stderr
        self._live: Live | None = None
        self._text = ""
        self._reasoning = ""
        self._running: dict[str, ToolCall] = {}
        self._progress: dict[str, str] = {}
        self._progress_drawn_at = -math.inf
        """What the spinner of a call that reported progress says instead of its arguments."""
        self._printed_any_text = False
        # While the user answers an approval question nothing may draw over it: no live region, and
        # lines meant for above it wait until the answer is in.
        self._asking = False
        self._held: list[tuple[RenderableType, bool]] = []  # (line, whether it goes aside)
        self._one_question_at_a_time = anyio.Lock()

    # -- the live region ------------------------------------------------------------------------

    def _view(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self._reasoning and not self._text:
            last = self._reasoning.strip().splitlines()[-1:] or [""]
            parts.append(Text(f"thinking: {_one_line(last[0], 100)}", style="dim italic"))
        if self._text:
            parts.append(Markdown(self._text))
        for call in self._running.values():
            label = self._progress.get(call.id) or describe_call(call)
            parts.append(Spinner("dots", Text(label, style="cyan")))
        return Group(*parts)

    def _refresh(self, *, now: bool = False) -> None:
        if not self.console.is_terminal or self._asking:
            return
        if self._live is None:
            self._live = Live(self._view(), console=self.console, refresh_per_second=12, transient=True)
            self._live.start()
        else:
            self._live.update(self._view(), refresh=now)

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _flush_text(self) -> None:
        """Print the text so far for good (it came before tool calls or is the final answer)."""
        if self._text.strip():
            self._stop_live()
            self._print_above(Markdown(self._text) if self.console.is_terminal else Text(self._text.strip()))
            self._printed_any_text = True
        self._text = ""
        self._reasoning = ""

    # -- events ---------------------------------------------------------------------------------

    def show(self, event: AgentEvent) -> None:
        if event.type == "text_delta":
            self._text += event.text
            if not self.console.is_terminal:
                return  # printed whole at the end of the step: plain output has no live region
        elif event.type == "reasoning_delta":
            self._reasoning += event.text
        elif event.type == "tool_call_started":
            self._flush_text()
            self._running[event.call.id] = event.call
            if not self.console.is_terminal:
                self.aside.print(f"→ {describe_call(event.call)}", markup=False)
        elif event.type == "tool_call_progress":
            self._progress[event.call_id] = progress_label(event)
            # Drawn at once, so a short call's report is seen; a flood of reports at the live region's pace.
            now = time.monotonic()
            drawn_now = now - self._progress_drawn_at >= _PROGRESS_REDRAW
            if drawn_now:
                self._progress_drawn_at = now
            self._refresh(now=drawn_now)
            return
        elif event.type == "tool_call_finished":
            self._progress.pop(event.call_id, None)
            call = self._running.pop(event.call_id, None)
            self._print_aside(self._finished_line(event, call))
        elif event.type == "invalid_tool_call":
            self._print_aside(Text(f"! unreadable tool call: {event.message}", style="yellow"))
        elif event.type == "tool_mode_changed":
            self._print_aside(Text(f"(tools moved into the prompt: {event.reason})", style="dim"))
        elif event.type == "step_finished":
            if event.outcome != "run_tools":
                self._flush_text()
        elif event.type == "final":
            self._flush_text()
            self._show_stop(event.result)
        self._refresh()

    def _print_aside(self, line: RenderableType) -> None:
        """A line about the run, not of the answer."""
        if self.aside is self.console:
            self._print_above(line)
        elif self._asking:
            self._held.append((line, True))
        else:
            self.aside.print(line)

    def _print_above(self, line: RenderableType) -> None:
        if self._asking:
            self._held.append((line, False))
        elif self._live is not None:
            self._live.console.print(line)
        else:
            self.console.print(line)

    @staticmethod
    def _finished_line(event: AgentEvent, call: ToolCall | None) -> Text:
        """`✓ name {arguments}  0.12s  result`. An error result was written for the model, not for the
        person watching: it is shown as what the model was told, not as an error of theirs."""
        assert event.type == "tool_call_finished"
        described = describe_call(call) if call is not None else event.name
        if event.error_kind == "denied":
            return Text(f"– {described}  declined, the model was told so", style="yellow")
        if event.error_kind == "cancelled":
            return Text(f"– {described}  cancelled", style="yellow")
        mark, style = ("✗", "yellow") if event.is_error else ("✓", "green")
        line = Text(f"{mark} ", style=style)
        line.append(described, style=style)
        line.append(f"  {event.duration:.2f}s", style="dim")
        if event.cached:
            line.append(" (cached)", style="dim")
        preview = _one_line(event.result_preview, _RESULT_SHOWN)
        if event.is_error:
            line.append(f"\n  the tool failed; the model was told: {preview}", style="dim")
        else:
            line.append(f"  {preview}")
        return line

    def _show_stop(self, result: RunResult) -> None:
        if result.stop_reason == "final_answer":
            return
        # Why there is no answer is for the person, like any error: on stderr, below what was shown.
        self._stop_live()
        detail = result.stop_detail or result.stop_reason.replace("_", " ")
        stderr.print(Text(f"stopped: {detail}", style="yellow"))

    async def ask_approval(self, request: ApprovalRequest) -> bool:
        return await self._asking_alone(_confirm(self.aside, request))

    async def ask(self, question: Callable[[Console], T]) -> T:
        ask = lambda: question(self.aside)  # noqa: E731
        return await self._asking_alone(anyio.to_thread.run_sync(ask, abandon_on_cancel=True))

    def note(self, text: str) -> None:
        self._print_aside(Text(text))

    async def _asking_alone(self, question: Awaitable[T]) -> T:
        async with self._one_question_at_a_time:
            self._stop_live()
            self._asking = True
            try:
                return await question
            finally:
                self._asking = False
                held, self._held = self._held, []
                for line, aside in held:
                    (self._print_aside if aside else self._print_above)(line)
                self._refresh()

    def close(self) -> None:
        self._stop_live()
        self._running.clear()
        self._progress.clear()
        self._text = ""
        self._reasoning = ""


class JsonEventPrinter(EventPrinter):
    """`--json`: one event per line on stdout; approval questions go to stderr."""

    def __init__(self, console: Console, errors: Console) -> None:
        self.console = console
        self.errors = errors

    def show(self, event: AgentEvent) -> None:
        self.console.out(event.model_dump_json(), highlight=False)

    async def ask_approval(self, request: ApprovalRequest) -> bool:
        return await _confirm(self.errors, request)
