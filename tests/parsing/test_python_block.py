"""`python_block`: code mode's ```python block, read as a call of `run_code` whole, one character at a time
and in random chunks; never read in `auto`."""

from __future__ import annotations

import pytest
from family_checks import Case, check_chunks, check_whole, random_cuts
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbridge.parsing import PythonBlockFormat, parse

FAMILY = "python_block"
MARKERS = ("```python",)
CODE = "total = 0\nfor i in range(3):\n    total = add(a=total, b=i)\nprint(f'`{total}`')"

CASES = [
    Case("block", f"```python\n{CODE}\n```", calls=[("run_code", {"code": CODE})]),
    Case(
        "text-around",
        f"I will add them.\n```py\n{CODE}\n```\nThe code ran.",
        "I will add them.\n\nThe code ran.",
        [("run_code", {"code": CODE})],
    ),
    Case("left-open", f"```python\n{CODE}\n", calls=[("run_code", {"code": CODE + "\n"})]),
    Case("two-blocks", "```python\na = 1\n```\n```python\nb = 2\n```", "\n", [("run_code", {"code": "a = 1"}), ("run_code", {"code": "b = 2"})]),
    Case("other-fences-are-text", "```json\n{}\n```\n```\nplain\n```", "```json\n{}\n```\n```\nplain\n```"),
    Case("a-fence-inside-a-line-is-code", "```python\ns = '```'\n```", calls=[("run_code", {"code": "s = '```'"})]),
]  # fmt: skip
IDS = [case.id for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_output(case: Case) -> None:
    check_whole(case, FAMILY, FAMILY, MARKERS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_character_at_a_time(case: Case) -> None:
    check_chunks(case, FAMILY, range(len(case.text)), MARKERS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_random_chunks(case: Case, data: st.DataObject) -> None:
    check_chunks(case, FAMILY, data.draw(random_cuts(case.text)), MARKERS)


def test_code_in_an_ordinary_answer_is_never_a_call_in_auto() -> None:
    result = parse(f"Here is how:\n```python\n{CODE}\n```", "auto")
    assert result.tool_calls == ()
    assert CODE in result.content


def test_writes_the_block_it_reads() -> None:
    written = PythonBlockFormat().format_call("run_code", {"code": CODE})
    assert [(call.name, call.arguments) for call in parse(written, FAMILY).tool_calls] == [
        ("run_code", {"code": CODE})
    ]
