"""`llama_pythonic`: Llama 4's (and Llama 3.2 1B/3B's) list of calls in Python syntax
(docs/dialects.md#llama_pythonic).

    [get_weather(city="Paris", days=3), get_time(tz='Europe/Paris')]
    <|python_start|>[get_weather(city="Paris")]<|python_end|>

Arguments are keyword arguments whose values are Python literals (strings in either quote with their
escapes, numbers, True/False/None, lists, tuples, dicts; JSON's true/false/null are taken too), read from
`ast.parse`'s tree of each value and never evaluated. `**{...}` passes keys that are not names. Each
call is reported as soon as its `)` arrives.

A bare `[` opens a list only when this format is asked for by name (never in `auto`, where only
`<|python_start|>` does), and only in the shape `[NAME(`: a markdown link `[text](url)`, `[1, 2]` and
`[see (below)]` stay text, and so does a bracket whose first call is not keyword literals (`[f(x)]`).
After `<|python_start|>`, or once a call of the list was read, a call that cannot be read is a
`ParseError` and reading goes on with the next one. A bare `[NAME(ARGUMENT=` that the output ends
inside (or a marker cuts, `[get(a=1<|eot|>`) is a call cut short: a `ParseError`, never text or a
call with its brackets closed for it. `<|python_end|>` and the end-of-turn tokens are
dropped. No call id, no reasoning markup.
"""

from __future__ import annotations

import ast
import enum
import itertools
import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import CallProblem, call_from_fields
from toolbridge.parsing._events import Event, ParseError, ToolCallArgumentsDelta, ToolCallEnd
from toolbridge.parsing._format import CallFormat, CallReader, ReadContext

__all__ = ["LlamaPythonicFormat", "read_python_arguments"]

OPEN = "<|python_start|>"
CLOSE = "<|python_end|>"
LIST_OPEN = "["
END_OF_TURN = ("<|eot|>", "<|eot_id|>", "<|eom|>", "<|eom_id|>")
FORMAT_NAME = "llama_pythonic"

_NON_WHITESPACE = re.compile(r"\S")
_NAME_END = re.compile(r"[^\w.-]")
_ARGUMENT_NAME = re.compile(r"\s*([^\W\d][\w.-]*)\s*")
_KEYWORD_START = re.compile(r"\s*(?:[^\W\d][\w.-]*\s*=|\*\*)")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_OUTSIDE_STRING = re.compile(r"[\"'()\[\]{},<]")
_OUTSIDE_STRING_NESTED = re.compile(r"[\"'()\[\]{}<]")  # below the call's own level commas don't matter
_INSIDE_STRING = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_JSON_NAMES = {"true": True, "false": False, "null": None}


class _State(enum.Enum):
    START = enum.auto()
    """Just after `<|python_start|>`: a `[`, or a single call without brackets."""
    LIST = enum.auto()
    """After `[` or a `,`: the next call's name (or `]`)."""
    NAME = enum.auto()
    ARGUMENTS = enum.auto()
    AFTER_CALL = enum.auto()


def _as_text(text: str) -> str:
    """A bracket that is no call list, shown as text: without this dialect's tokens, which its strings
    may hold, since those are never content."""
    if "<|" not in text:
        return text
    for token in (OPEN, CLOSE, *END_OF_TURN):
        text = text.replace(token, "")
    return text


def _starts_name(char: str) -> bool:
    return char.isalpha() or char == "_"


class _PythonicReader(CallReader):
    format_name = FORMAT_NAME

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._bare = opening_marker == LIST_OPEN
        self._state = _State.LIST if self._bare else _State.START
        self._in_list = self._bare
        self._strict = self._bare
        """A bare `[` must be followed at once by a name: `[ see (below)]` is prose."""
        self._raw: list[str] = [opening_marker]
        """What was read since the last call that was reported: the text of an error or a rejection."""
        self._read_from = 0
        self._name: list[str] = []
        self._arguments: list[str] = []
        self._splits: list[int] = []
        """Where the top-level commas are in the arguments text."""
        self._length = 0
        self._depth = 0
        self._quote: str | None = None
        self._escaped = False
        self._calls = 0
        self._rejecting = False

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        self._read_from = pos
        while pos < n and not self.finished and not self._rejecting:
            state = self._state
            if state is _State.NAME:
                pos = self._read_name(text, pos, events)
            elif state is _State.ARGUMENTS:
                pos = self._read_arguments(text, pos, events)
            elif self._strict:
                pos = self._decide(text, pos, events)
            else:
                match = _NON_WHITESPACE.search(text, pos)
                if match is None:
                    pos = n
                    break
                pos = self._decide(text, match.start(), events)
        if self._rejecting:
            self.rejected_text = _as_text(self._consumed(text, pos))
        else:
            self._raw.append(text[self._read_from : pos])
        return pos

    def _consumed(self, text: str, index: int) -> str:
        return "".join(self._raw) + text[self._read_from : index]

    def _decide(self, text: str, index: int, events: list[Event]) -> int:
        """At the first non-blank character of a state between calls."""
        state = self._state
        char = text[index]
        if state is _State.START:
            if char == "[":
                self._in_list = True
                self._state = _State.LIST
                return index + 1
            if _starts_name(char):
                self._state = _State.NAME
                return index
            return self._fail(text, index, events, f"{OPEN} is not followed by a list of calls")
        if state is _State.LIST:
            if _starts_name(char):
                self._state = _State.NAME
                self._strict = False
                self.between_calls = False
                return index
            if char == "]" and not self._strict:  # an empty list, or a comma after the last call
                self.finished = True
                return index + 1
            return self._fail(text, index, events, "a call is written NAME(ARGUMENT=value, ...)")
        # AFTER_CALL
        if self._in_list and char == ",":
            self._state = _State.LIST
            return index + 1
        self.finished = True
        return index + 1 if self._in_list and char == "]" else index

    def _read_name(self, text: str, pos: int, events: list[Event]) -> int:
        match = _NAME_END.search(text, pos)
        if match is None:
            self._name.append(text[pos:])
            return len(text)
        end = match.start()
        self._name.append(text[pos:end])
        if text[end] != "(":
            return self._fail(text, end, events, "a call is written NAME(ARGUMENT=value, ...)")
        self._state = _State.ARGUMENTS
        self._depth = 1
        return end + 1

    def _read_arguments(self, text: str, pos: int, events: list[Event]) -> int:
        """Up to the `)` that closes the call, following strings and brackets."""
        n = len(text)
        start = pos  # text[start:pos] is read, and kept when the loop ends
        while pos < n:
            if self._quote is not None:
                if self._escaped:  # the character after a backslash, perhaps a quote
                    self._escaped = False
                    pos += 1
                    continue
                match = _INSIDE_STRING[self._quote].search(text, pos)
                if match is None:
                    pos = n
                    break
                index = match.start()
                if text[index] == "\\":
                    self._escaped = True
                else:
                    self._quote = None
                pos = index + 1
                continue
            match = (_OUTSIDE_STRING if self._depth == 1 else _OUTSIDE_STRING_NESTED).search(text, pos)
            if match is None:
                pos = n
                break
            index = match.start()
            char = text[index]
            pos = index + 1
            if char in "\"'":
                self._quote = char
            elif char in "([{":
                self._depth += 1
            elif char in ")]}":
                self._depth -= 1
                if self._depth == 0:
                    self._add(text[start:index])
                    if char != ")":
                        return self._fail(text, index, events, "its brackets do not match")
                    return self._end_call(text, pos, events)
            elif char == ",":
                if self._depth == 1:
                    self._splits.append(self._length + index - start)
            else:  # '<': a marker (or stray markup) before the call was complete
                self._add(text[start:index])
                return self._fail(text, index, events, "the call is not complete", cut=True)
        self._add(text[start:pos])
        return n

    def _add(self, piece: str) -> None:
        self._arguments.append(piece)
        self._length += len(piece)

    def _end_call(self, text: str, end: int, events: list[Event]) -> int:
        name = "".join(self._name)
        arguments_text = "".join(self._arguments)
        splits = self._splits
        self._name, self._arguments, self._splits, self._length = [], [], [], 0
        self._state = _State.AFTER_CALL
        try:
            arguments = read_python_arguments(arguments_text, splits)
            call = call_from_fields(name, arguments, None, None, FORMAT_NAME)
        except CallProblem as problem:
            if self._bare and self._calls == 0:
                self._rejecting = True
                return end
            message = f"Could not read the {FORMAT_NAME} tool call: {problem}."
            events.append(ParseError(message, f"{name}({arguments_text})"))
            self._reset_raw(text, end)
            return end
        self._calls += 1
        self._announce(call.name, events)
        events.append(ToolCallArgumentsDelta(json.dumps(call.arguments, ensure_ascii=False)))
        events.append(ToolCallEnd(call))
        self._started = False
        self.between_calls = True
        self.finished = not self._in_list  # `<|python_start|>f(a=1)`: one call, no list
        self._reset_raw(text, end)
        return end

    def _reset_raw(self, text: str, index: int) -> None:
        self._raw = []
        self._read_from = index

    def _fail(self, text: str, index: int, events: list[Event], problem: str, *, cut: bool = False) -> int:
        """The text is not a call: shown as text again (a bare `[` before any call, unless it was `cut`
        inside keyword arguments), else an error. Reading resumes at `index`, as ordinary output."""
        if self._bare and self._calls == 0 and not (cut and self._inside_keyword_arguments()):
            self._rejecting = True
            return index
        self.finished = True
        raw = self._consumed(text, index)
        if raw.strip():
            message = f"Could not read the {FORMAT_NAME} tool call: {problem}; write [NAME(ARGUMENT=value)]."
            events.append(ParseError(message, raw))
        return index

    def _inside_keyword_arguments(self) -> bool:
        """`[NAME(ARGUMENT=...` so far: a call begun, whose end is still to come (prose is rarely so)."""
        return self._state is _State.ARGUMENTS and _KEYWORD_START.match("".join(self._arguments)) is not None

    def finish(self, tail: str, events: list[Event]) -> str:
        if self._state is _State.AFTER_CALL or (self._state is _State.LIST and self._calls):
            return ""  # every call is complete: only the closing `]` is missing
        raw = "".join(self._raw) + tail
        if self._bare and self._calls == 0 and not self._inside_keyword_arguments():
            # Text; from its first '<' (in a string, perhaps a marker the string swallowed) read again.
            cut = raw.find("<")
            cut = len(raw) if cut < 0 else cut
            self.rejected_text = raw[:cut]
            return raw[cut:]
        else:
            message = f"Could not read the {FORMAT_NAME} tool call: the output ended inside it, so it was not run; write the whole call again."
            events.append(ParseError(message, raw))
        return ""


def read_python_arguments(text: str, splits: list[int] | None = None) -> dict[str, Any]:
    """Keyword arguments `a=1, b="x"` (the text between a call's parentheses) as a dict.
    `splits`: where its top-level commas are, if known; found here otherwise."""
    whole = _read_whole(text)
    if whole is not None:
        return whole
    if splits is None:
        splits = _top_level_commas(text)
    bounds = [-1, *splits, len(text)]
    arguments: dict[str, Any] = {}
    for index, (start, end) in enumerate(itertools.pairwise(bounds)):
        piece = text[start + 1 : end]
        if not piece.strip():
            if index == len(bounds) - 2:  # nothing after a trailing comma, or no arguments at all
                continue
            raise CallProblem("it has an empty argument between two commas")
        if piece.lstrip().startswith("**"):
            value = _literal_text(piece.lstrip()[2:])
            if not isinstance(value, dict):
                raise CallProblem("only a dict can follow **")
            arguments.update(value)
            continue
        key, equals, value_text = piece.partition("=")
        name = _ARGUMENT_NAME.fullmatch(key)
        if not equals or name is None:
            raise CallProblem("write every argument as NAME=value (it has a positional argument)")
        arguments[name.group(1)] = _literal_text(value_text)
    return arguments


def _read_whole(text: str) -> dict[str, Any] | None:
    """The arguments in one parse when they are plain Python (most calls); None when they are not
    (argument names that are keywords or hold `-`, raw line breaks in strings, ...)."""
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        return None  # Python would NFKC-normalize the names (`ª=1` is `a=1` to it): read them as written
    try:
        tree = ast.parse(f"_({text}\n)", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.args:
        return None
    arguments: dict[str, Any] = {}
    for keyword in call.keywords:
        value = _literal(keyword.value)
        if keyword.arg is not None:
            arguments[keyword.arg] = value
        elif isinstance(value, dict):
            arguments.update(value)
        else:
            raise CallProblem("only a dict can follow **")
    return arguments


def _top_level_commas(text: str) -> list[int]:
    """Where the commas between arguments are: outside strings and brackets."""
    commas: list[int] = []
    depth = 0
    quote: str | None = None
    escaped = False
    for index, char in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            commas.append(index)
    return commas


def _literal_text(text: str) -> Any:
    text = text.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Models write line breaks into one-line strings as they are; Python wants them escaped.
        escaped = _escape_line_breaks_in_strings(text)
        try:
            tree = ast.parse(escaped, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise CallProblem(f"the value {_short(text)} is not a Python literal") from None
    return _literal(tree.body)


def _escape_line_breaks_in_strings(text: str) -> str:
    """`text` with each raw line break inside a quoted string written as an escape."""
    out: list[str] = []
    quote: str | None = None
    escaped = False
    for char in text:
        if quote is not None and not escaped and char in "\n\r":
            out.append("\\n" if char == "\n" else "\\r")
            continue
        out.append(char)
        if escaped:
            escaped = False
        elif quote is not None and char == "\\":
            escaped = True
        elif char == quote:
            quote = None
        elif quote is None and char in "\"'":
            quote = char
    return "".join(out)


def _short(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _literal(node: ast.expr) -> Any:
    """A Python literal's value as JSON would hold it (tuples and sets become lists)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, float) and not math.isfinite(value):
            raise CallProblem("a number is too large")
        if value is None or isinstance(value, bool | int | float | str):
            return value
        raise CallProblem(f"a {type(value).__name__} value cannot be sent")
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise CallProblem("a dict cannot contain **")
            key = _literal(key_node)
            if isinstance(key, list | dict):
                raise CallProblem("a dict key must be a string or a number")
            result[key if isinstance(key, str) else json.dumps(key)] = _literal(value_node)
        return result
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _literal(node.operand)
        if isinstance(operand, int | float) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    raise CallProblem("a value is not a literal (a string, number, True/False/None, list or dict)")


def python_literal(value: Any) -> str:
    """`value` (JSON-like) written as a Python literal."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a Python string literal too
    if isinstance(value, Mapping):
        items = (f"{python_literal(str(k))}: {python_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def python_call(name: str, arguments: Mapping[str, Any]) -> str:
    """`name(a=1, b="x")`; when a key is not a name, all of them go in one `**{...}` (keeping their order)."""
    if all(_IDENTIFIER.fullmatch(key) for key in arguments):
        written = ", ".join(f"{key}={python_literal(value)}" for key, value in arguments.items())
    else:
        written = f"**{python_literal(arguments)}"
    return f"{name}({written})"


class LlamaPythonicFormat(CallFormat):
    name = FORMAT_NAME
    opening_markers = (OPEN,)
    named_markers = (LIST_OPEN,)
    stray_markers = (CLOSE,)
    end_of_turn_markers = END_OF_TURN
    call_noun = "call"
    call_instructions = (
        "a Python list of calls, [NAME(ARGUMENT=value, ...)], with keyword arguments only and Python "
        "literal values (strings, numbers, True/False/None, lists, dicts); several calls go in one list, "
        "separated by commas"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return f"[{python_call(name, arguments)}]"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _PythonicReader(marker)
