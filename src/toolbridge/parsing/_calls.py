"""From the text of a call to a `ParsedToolCall`: JSON decoding with repair, and the aliases models use.

`decode_arguments` is the one rule for arguments written as JSON text, wherever they come from: a call
parsed out of the text here, or a native call's streamed argument deltas (the models layer uses it).

Repair fixes how JSON is written (quoting, trailing commas, single quotes, Python's True/None, a missing
comma), never what it says: JSON that ends inside a string or with brackets still open was cut short (by
a closing marker in the wrong place, or by the end of the output), and its brackets closed for it would
run a call with arguments the model never finished. Such JSON, and JSON whose brackets do not match, is
refused (`CallProblem`), so the model is told and writes the call again.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

from toolbridge._values import MAX_INT_DIGITS, readable_text, value_problem
from toolbridge.parsing._events import ParsedToolCall

__all__ = [
    "ARGUMENT_KEYS",
    "NAME_KEYS",
    "CallProblem",
    "call_from_fields",
    "call_from_object",
    "decode_arguments",
    "decode_json",
]

NAME_KEYS = ("name", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters")

_STRUCTURE = re.compile(r"[\"'{}\[\]]")
_STRING_END = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_OPENER = {"}": "{", "]": "["}


class CallProblem(Exception):
    """Why a call could not be read, in words meant for the model."""


def _bounded_int(digits: str) -> int:
    # Checked before converting: Python refuses longer ones with a ValueError that repair would hide.
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise CallProblem(f"it has an integer of more than {MAX_INT_DIGITS} digits")
    return int(digits)


def decode_json(text: str) -> Any:
    """Decode JSON, repairing how models commonly get it wrong (trailing commas, single quotes, unquoted
    keys, Python literals). Raises `CallProblem` when nothing sensible comes out, and when the JSON is
    incomplete (cut inside a string or with brackets left open) or its brackets do not match: closing
    them would invent arguments."""
    try:
        # strict=False: models put raw newlines and tabs inside strings.
        return json.loads(text, strict=False, parse_int=_bounded_int)
    except RecursionError:
        raise CallProblem("its JSON is nested too deeply to read") from None
    except ValueError as exc:
        error = exc
    if problem := _incomplete(text):
        raise CallProblem(
            f"its JSON {problem}, so its arguments may be incomplete and it was not run; "
            "write the whole call again"
        )
    try:
        repaired = json_repair.loads(text)
    except Exception:  # json-repair has no exception type of its own; any failure means "unreadable"
        repaired = ""
    # Repair turns what it cannot read into an empty value: that is no reading at all.
    if repaired in ("", None, {}, []):
        raise CallProblem(f"its JSON is invalid and could not be repaired ({error})")
    return repaired


def _incomplete(text: str) -> str | None:
    """How `text` fails to be whole JSON structure: a string left open, a bracket closed by the wrong
    kind, brackets left open; None when none of these. Quotes of either kind are followed (repair reads
    single-quoted strings); a `'` opens a string only where a key or value can start."""
    open_brackets: list[str] = []
    pos = 0
    while (found := _STRUCTURE.search(text, pos)) is not None:
        index = found.start()
        char = text[index]
        pos = index + 1
        if char == '"' or (char == "'" and _value_can_start(text, index)):
            end = _string_end(text, pos, char)
            if end < 0:
                return "ends inside a string"
            pos = end + 1
        elif char in "{[":
            open_brackets.append(char)
        # A closer with nothing open is one too many, which repair drops: nothing is invented.
        elif char in "}]" and open_brackets and open_brackets.pop() != _OPENER[char]:
            return f"has a {char!r} where a {'}' if char == ']' else ']'!r} belongs"
    if open_brackets:
        closers = "".join("}" if bracket == "{" else "]" for bracket in reversed(open_brackets))
        return f"ends before its closing {closers!r}"
    return None


def _value_can_start(text: str, index: int) -> bool:
    before = index - 1
    while before >= 0 and text[before].isspace():  # each run of white space is walked back once
        before -= 1
    return before < 0 or text[before] in "{[,:"


def _string_end(text: str, pos: int, quote: str) -> int:
    """The index of the quote that closes a string whose text starts at `pos`; -1 when none does."""
    search = _STRING_END[quote].search
    while (found := search(text, pos)) is not None:
        index = found.start()
        if text[index] == quote:
            return index
        pos = index + 2  # the escaped character
    return -1


def decode_arguments(text: str) -> dict[str, Any]:
    """A call's arguments from their JSON text (empty text: no arguments), repaired where needed.
    Raises `CallProblem` unless the text is, or repairs to, one JSON object."""
    if not text.strip():
        return {}
    value = decode_json(text)
    if not isinstance(value, dict):
        raise CallProblem(f"the arguments must be a JSON object, got {type(value).__name__}")
    if problem := value_problem(value):
        raise CallProblem(f"the arguments {problem}")
    return value


def call_from_object(value: Any, format_name: str) -> ParsedToolCall:
    """Read a call object such as `{"name": ..., "arguments": {...}}`, accepting the aliases models use:
    `tool_name` for `name`, `parameters` for `arguments`, and OpenAI's nested `{"function": {...}}`."""
    if not isinstance(value, dict):
        raise CallProblem(f"expected a JSON object with a name and arguments, got {type(value).__name__}")
    function = value.get("function")
    if isinstance(function, dict):
        value = {**value, **function}
    name = next((value[key] for key in NAME_KEYS if isinstance(value.get(key), str)), None)
    arguments = next((value[key] for key in ARGUMENT_KEYS if key in value), None)
    return call_from_fields(name, arguments, value.get("id"), value.get("source"), format_name)


def call_from_fields(
    name: Any, arguments: Any, call_id: Any, source: Any, format_name: str
) -> ParsedToolCall:
    if not isinstance(name, str) or not name.strip():
        raise CallProblem("the call has no tool name")
    if isinstance(arguments, str):
        arguments = decode_arguments(arguments)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise CallProblem(f"the arguments must be a JSON object, got {type(arguments).__name__}")
    if problem := value_problem(arguments):
        raise CallProblem(f"the arguments {problem}")
    return ParsedToolCall(
        name=readable_text(name.strip()),
        arguments=arguments,
        id=readable_text(str(call_id)) if isinstance(call_id, str | int) and str(call_id) else None,
        source=readable_text(source) if isinstance(source, str) and source else None,
        format=format_name,
    )
