"""The conformance table (conformance_table.py), read whole, one character at a time and in random chunks,
in each row's dialect and in `auto`; and the dialect and reasoning hint toolbridge picks by model name.

Content and reasoning are compared without their leading and trailing white space: which white space
around markers is kept is item A's (issue 24) to settle, and its own tests check the exact bytes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from conformance_forms import FORMS, Row
from conformance_table import ROWS
from family_checks import random_cuts, stream
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from toolbridge.models.model_profiles import model_profile
from toolbridge.parsing import ParseResult, parse


def params(row_formats: Sequence[tuple[Row, str]]) -> list[object]:
    marked = []
    for row, fmt in row_formats:
        marks = [pytest.mark.xfail(strict=True, reason=row.pending)] if row.pending else []
        marked.append(pytest.param(row, fmt, marks=marks, id=f"{row.id}:{fmt}"))
    return marked


ROW_FORMATS = params(
    [
        (row, fmt)
        for row in ROWS
        for fmt in dict.fromkeys([row.dialect, "auto"])
        if fmt != "auto" or row.in_auto
    ]
)


NO_SHRINKING = (Phase.explicit, Phase.generate)
"""A pending row fails in every chunking: shrinking the chunks would only cost time."""


def check(result: ParseResult, row: Row) -> None:
    case = row.case
    assert result.content.strip() == case.content.strip()
    assert result.reasoning.strip() == case.reasoning.strip()
    assert [(call.name, call.arguments) for call in result.tool_calls] == case.calls
    assert all(call.format == row.dialect for call in result.tool_calls)
    assert len(result.errors) == case.errors, result.errors
    if case.ids is not None:
        assert [call.id for call in result.tool_calls] == case.ids


def read(row: Row, fmt: str, cuts: Sequence[int]) -> ParseResult:
    case = row.case
    hint = bool(case.reasoning_open)
    events = stream(case.text, cuts, fmt, reasoning_open=hint, truncated=case.truncated, schemas=row.schemas)
    return ParseResult.from_events(events)


def read_whole(row: Row, fmt: str) -> ParseResult:
    case = row.case
    hint = bool(case.reasoning_open)
    return parse(case.text, fmt, reasoning_open=hint, truncated=case.truncated, schemas=row.schemas)


@pytest.mark.parametrize(("row", "fmt"), ROW_FORMATS)
def test_whole(row: Row, fmt: str) -> None:
    check(read_whole(row, fmt), row)


@pytest.mark.parametrize(("row", "fmt"), ROW_FORMATS)
def test_one_character_at_a_time(row: Row, fmt: str) -> None:
    result = read(row, fmt, range(len(row.case.text)))
    check(result, row)
    assert result == read_whole(row, fmt)


@settings(max_examples=15, deadline=None, phases=NO_SHRINKING)
@pytest.mark.parametrize(("row", "fmt"), ROW_FORMATS)
@given(data=st.data())
def test_random_chunks(row: Row, fmt: str, data: st.DataObject) -> None:
    result = read(row, fmt, data.draw(random_cuts(row.case.text)))
    check(result, row)
    assert result == read_whole(row, fmt)


PROFILED = [
    pytest.param(
        row,
        id=row.id,
        marks=[pytest.mark.xfail(strict=True, reason=row.profile_pending)] if row.profile_pending else [],
    )
    for row in ROWS
    if row.model
]


@pytest.mark.parametrize("row", PROFILED)
def test_the_row_names_the_dialect_and_hint_toolbridge_picks_for_the_model(row: Row) -> None:
    assert row.model is not None
    profile = model_profile(row.model)
    assert (profile.dialect, profile.reasoning_open) == (row.dialect, row.case.reasoning_open)


def test_every_family_has_every_form_once() -> None:
    forms: dict[str, list[str]] = {}
    for row in ROWS:
        forms.setdefault(row.family, []).append(row.form)
    for family, written in forms.items():
        assert set(FORMS) <= set(written), family
        assert len(written) == len(set(written)), family
