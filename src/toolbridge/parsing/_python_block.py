"""`python_block`: code mode's call for models in prompt mode, a fenced block of Python.

    ```python
    total = add(a=1, b=2)
    print(total)
    ```

is a call of `run_code` with that code (`toolbridge.tools.code_mode`). The block ends at a line that is
only the closing fence, or at the end of the output. Not in the registry, so never read in `auto`: code
in an ordinary answer stays text; an agent in code mode asks for this format itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import call_from_fields
from toolbridge.parsing._events import Event, ToolCallArgumentsDelta
from toolbridge.parsing._format import CallFormat, CallReader, MarkerMatch, ReadContext, read_to_marker

__all__ = ["CODE_TOOL", "PythonBlockFormat"]

CODE_TOOL = "run_code"
FORMAT_NAME = "python_block"
CLOSE = "\n```"


class _PythonBlockReader(CallReader):
    format_name = FORMAT_NAME

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._code: list[str] = []

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        index, outcome = read_to_marker(text, pos, CLOSE, self._code)
        if outcome is MarkerMatch.FULL:
            self._end(events)
            return index + len(CLOSE)
        return index  # at a partial fence: held back until it shows whether the block ends

    def finish(self, tail: str, events: list[Event]) -> str:
        self._code.append(tail)  # a block the output left open: the code is what was written
        self._end(events)
        return ""

    def _end(self, events: list[Event]) -> None:
        code = "".join(self._code)
        self._announce(CODE_TOOL, events)
        events.append(ToolCallArgumentsDelta(json.dumps({"code": code}, ensure_ascii=False)))
        self._complete(
            lambda: call_from_fields(CODE_TOOL, {"code": code}, None, None, FORMAT_NAME), code, events
        )


class PythonBlockFormat(CallFormat):
    name = FORMAT_NAME
    opening_markers = ("```python\n", "```py\n")
    call_noun = "```python block"
    call_instructions = (
        "the code in a fenced block that starts with a line ```python and ends with a line ``` (it runs "
        "as run_code: the tools are functions in it)"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return f"```python\n{arguments.get('code', '')}\n```"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _PythonBlockReader(marker)
