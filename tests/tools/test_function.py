"""Python functions as tools: schemas from type hints and docstrings, running them, and their results."""

from __future__ import annotations

import threading
from enum import Enum
from typing import Annotated, Any, Literal

import anyio
import pytest
from pydantic import BaseModel, Field

from toolbridge.errors import UsageError
from toolbridge.tools.function import FunctionTool, parse_docstring, tool
from toolbridge.types import NATIVE_SOURCE, ImagePart, TextPart, ToolAnnotations, ToolCall, ToolResult


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    """A point on the plane."""

    x: int
    y: int = 0


# -- schemas ----------------------------------------------------------------------------------------


def f_str(text: str) -> None: ...
def f_int_default(count: int = 3) -> None: ...
def f_float(ratio: float) -> None: ...
def f_bool(flag: bool = False) -> None: ...
def f_list(items: list[int]) -> None: ...
def f_dict(data: dict[str, Any]) -> None: ...
def f_literal(mode: Literal["fast", "slow"] = "fast") -> None: ...
def f_enum(color: Color) -> None: ...
def f_optional(limit: int | None = None) -> None: ...
def f_model(point: Point) -> None: ...
def f_untyped(anything) -> None: ...  # type: ignore[no-untyped-def]
def f_none() -> None: ...
def f_shadowing(json: str, schema: int = 1, model_config: str = "x", title: str = "t") -> None: ...


@pytest.mark.parametrize(
    ("function", "properties", "required"),
    [
        (f_str, {"text": {"type": "string"}}, ["text"]),
        (f_int_default, {"count": {"type": "integer", "default": 3}}, None),
        (f_float, {"ratio": {"type": "number"}}, ["ratio"]),
        (f_bool, {"flag": {"type": "boolean", "default": False}}, None),
        (f_list, {"items": {"type": "array", "items": {"type": "integer"}}}, ["items"]),
        (f_dict, {"data": {"type": "object", "additionalProperties": True}}, ["data"]),
        (f_literal, {"mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"}}, None),
        (f_enum, {"color": {"$ref": "#/$defs/Color"}}, ["color"]),
        (f_optional, {"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}}, None),
        (f_model, {"point": {"$ref": "#/$defs/Point"}}, ["point"]),
        (f_untyped, {"anything": {}}, ["anything"]),
        (f_none, {}, None),
        (
            f_shadowing,
            {
                "json": {"type": "string"},
                "schema": {"type": "integer", "default": 1},
                "model_config": {"type": "string", "default": "x"},
                "title": {"type": "string", "default": "t"},
            },
            ["json"],
        ),
    ],
)
def test_input_schema_from_type_hints(
    function: Any, properties: dict[str, Any], required: list[str] | None
) -> None:
    schema = FunctionTool.from_function(function).spec.input_schema
    assert schema["type"] == "object"
    assert schema["properties"] == properties
    assert schema.get("required") == required
    assert schema["additionalProperties"] is False


def test_referenced_definitions_are_included_without_generated_titles() -> None:
    schema = FunctionTool.from_function(f_model).spec.input_schema
    assert schema["$defs"]["Point"] == {
        "description": "A point on the plane.",
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert "title" not in schema
    assert FunctionTool.from_function(f_enum).spec.input_schema["$defs"]["Color"] == {
        "type": "string",
        "enum": ["red", "blue"],
    }


def test_pydantic_field_constraints_reach_the_schema() -> None:
    def bounded(n: Annotated[int, Field(ge=1, le=10, description="From one to ten.")]) -> int:
        return n

    assert FunctionTool.from_function(bounded).spec.input_schema["properties"]["n"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "description": "From one to ten.",
    }


def documented(path: str, limit: int = 10, *, recursive: bool = False) -> list[str]:
    """List files in a directory.

    Hidden files are skipped.

    Args:
        path: The directory to list.
        limit (int): How many entries to return
            at most.
        recursive: Descend into subdirectories.

    Returns:
        The file names.

    Raises:
        FileNotFoundError: if path does not exist.
    """
    return []


def test_docstring_gives_description_and_parameter_descriptions() -> None:
    spec = FunctionTool.from_function(documented).spec
    assert spec.name == "documented"
    assert spec.description == "List files in a directory.\n\nHidden files are skipped."
    properties = spec.input_schema["properties"]
    assert properties["path"]["description"] == "The directory to list."
    assert properties["limit"]["description"] == "How many entries to return at most."
    assert properties["recursive"]["description"] == "Descend into subdirectories."
    assert spec.source == NATIVE_SOURCE


@pytest.mark.parametrize(
    ("docstring", "description", "parameters"),
    [
        ("", "", {}),
        ("One line.", "One line.", {}),
        ("Summary.\n\nArgs:\n    a: first\n    b: second", "Summary.", {"a": "first", "b": "second"}),
        ("Summary.\n\nArguments:\n    a (str): typed entry", "Summary.", {"a": "typed entry"}),
        ("Summary.\n\nParameters:\n    a: x\n\nReturns:\n    b: not a parameter", "Summary.", {"a": "x"}),
        (
            "Summary.\n\n    Args:\n        a: starts\n          and goes on\n        b:\n    ",
            "Summary.",
            {"a": "starts and goes on", "b": ""},
        ),
        ("Summary.\n\nArgs:\n    **kwargs: extra", "Summary.", {"kwargs": "extra"}),
        ("Summary: with a colon inside.", "Summary: with a colon inside.", {}),
    ],
)
def test_parse_docstring(docstring: str, description: str, parameters: dict[str, str]) -> None:
    assert parse_docstring(docstring) == (description, parameters)


def test_decorator_forms_and_overrides() -> None:
    @tool
    def plain(x: int) -> int:
        """Double it."""
        return x * 2

    @tool(
        name="renamed", description="Custom.", title="Nice", annotations=ToolAnnotations(read_only_hint=True)
    )
    def original(x: int) -> int:
        """Ignored docstring."""
        return x

    assert isinstance(plain, FunctionTool)
    assert (plain.spec.name, plain.spec.description) == ("plain", "Double it.")
    assert plain(21) == 42, "a decorated function stays callable"
    assert (original.spec.name, original.spec.description, original.spec.title) == (
        "renamed",
        "Custom.",
        "Nice",
    )
    assert original.spec.annotations.read_only_hint is True
    assert original.__name__ == "original"


@pytest.mark.parametrize(
    ("function", "kwargs", "fragment"),
    [
        (lambda x: x, {}, "'<lambda>' is not usable"),
        (f_str, {"name": "has space"}, "Pass name=..."),
        (f_str, {"name": "x" * 65}, "1-64 letters"),
        (lambda *args: 0, {"name": "varargs"}, "give the function named parameters"),
        (lambda **kw: 0, {"name": "varkw"}, "give the function named parameters"),
        (lambda a, /: 0, {"name": "posonly"}, "positional-only"),
    ],
)
def test_functions_that_cannot_be_tools_are_refused(
    function: Any, kwargs: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(UsageError) as info:
        FunctionTool.from_function(function, **kwargs)
    assert fragment in str(info.value)


# -- running ----------------------------------------------------------------------------------------


async def run(function_tool: FunctionTool, **arguments: Any) -> ToolResult:
    return await function_tool.run(ToolCall(name=function_tool.spec.name, arguments=arguments, id="c1"))


@pytest.mark.anyio
async def test_sync_function_runs_in_a_worker_thread() -> None:
    loop_thread = threading.get_ident()

    @tool
    def where() -> str:
        return "worker" if threading.get_ident() != loop_thread else "event loop"

    result = await run(where)
    assert result.text == "worker"
    assert (result.call_id, result.server, result.is_error) == ("c1", NATIVE_SOURCE, False)


@pytest.mark.anyio
async def test_sync_functions_do_not_block_each_other() -> None:
    # Each call waits until all five are inside the function: that can only happen if they overlap.
    # (The timeout only turns a regression into a failure instead of a hang.)
    everyone_in = threading.Barrier(5, timeout=10)

    @tool
    def meet() -> str:
        everyone_in.wait()
        return "done"

    results: list[ToolResult] = []

    async def one() -> None:
        results.append(await run(meet))

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(one)
    assert [(r.text, r.is_error) for r in results] == [("done", False)] * 5


@pytest.mark.anyio
async def test_async_function_is_awaited() -> None:
    @tool
    async def later(delay: float) -> str:
        await anyio.sleep(delay)
        return f"slept {delay}"

    result = await run(later, delay=0.01)
    assert result.text == "slept 0.01"
    assert result.duration >= 0.01


@pytest.mark.anyio
async def test_arguments_are_validated_into_python_types() -> None:
    seen: dict[str, Any] = {}

    @tool
    def typed(point: Point, color: Color, mode: Literal["a", "b"] = "a", limit: int | None = None) -> str:
        seen.update(point=point, color=color, mode=mode, limit=limit)
        return "ok"

    result = await run(typed, point={"x": 1}, color="blue")
    assert result.text == "ok"
    assert seen == {"point": Point(x=1, y=0), "color": Color.BLUE, "mode": "a", "limit": None}


@pytest.mark.anyio
async def test_parameter_names_that_shadow_model_attributes_are_passed_through() -> None:
    @tool
    def shadow(json: str, model_config: str = "d") -> str:
        return f"{json}/{model_config}"

    assert (await run(shadow, json="j")).text == "j/d"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        ({}, ["Invalid arguments for tool 'needs_int'", "at 'n': Field required", "Call the tool again"]),
        ({"n": "abc"}, ["at 'n': Input should be a valid integer"]),
        ({"n": 1, "m": 2}, ["at 'm': Extra inputs are not permitted"]),
    ],
)
async def test_bad_arguments_become_error_results(arguments: dict[str, Any], fragments: list[str]) -> None:
    @tool
    def needs_int(n: int) -> int:
        return n

    result = await run(needs_int, **arguments)
    assert (result.is_error, result.error_kind) == (True, "invalid_arguments")
    for fragment in fragments:
        assert fragment in result.text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ValueError("the file is empty"), "the file is empty"),
        (KeyError("missing"), "KeyError: 'missing'"),
        (RuntimeError(), "RuntimeError"),
        (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    ],
)
async def test_exceptions_become_error_results(error: Exception, expected: str) -> None:
    @tool
    def fails() -> None:
        raise error

    @tool
    async def fails_async() -> None:
        raise error

    for function_tool in (fails, fails_async):
        result = await run(function_tool)
        assert (result.is_error, result.error_kind) == (True, "server_error")
        assert result.text == expected
        assert (result.call_id, result.server) == ("c1", NATIVE_SOURCE)


@pytest.mark.anyio
async def test_a_hung_sync_tool_does_not_hold_its_caller_past_a_timeout() -> None:
    release, finished = threading.Event(), threading.Event()

    @tool
    def hangs() -> str:
        release.wait(5)
        finished.set()
        return "late"

    with anyio.move_on_after(0.2):
        await run(hangs)
    assert not finished.is_set()  # the caller was let go while the tool still hung
    release.set()


class Forecast(BaseModel):
    city: str
    celsius: float


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("value", "text", "structured"),
    [
        ("plain text", "plain text", None),
        ("", "", None),
        ({"a": 1, "b": [True, None]}, '{"a": 1, "b": [true, null]}', {"a": 1, "b": [True, None]}),
        ([1, "two"], '[1, "two"]', {"result": [1, "two"]}),
        (42, "42", {"result": 42}),
        (2.5, "2.5", {"result": 2.5}),
        (False, "false", {"result": False}),
        (
            Forecast(city="Oslo", celsius=-3.5),
            '{"city": "Oslo", "celsius": -3.5}',
            {"city": "Oslo", "celsius": -3.5},
        ),
        (Color.RED, "red", None),
        ({"ünïcode": "ü"}, '{"ünïcode": "ü"}', {"ünïcode": "ü"}),
    ],
)
async def test_return_values_become_content(value: Any, text: str, structured: dict[str, Any] | None) -> None:
    @tool
    def returns() -> Any:
        return value

    result = await run(returns)
    assert not result.is_error
    assert result.content == [TextPart(text=text)]
    assert result.structured_content == structured


@pytest.mark.anyio
async def test_none_gives_empty_content() -> None:
    @tool
    def nothing() -> None:
        return None

    result = await run(nothing)
    assert (result.content, result.structured_content, result.is_error) == ([], None, False)


@pytest.mark.anyio
async def test_content_parts_and_tool_results_pass_through() -> None:
    image = ImagePart(data="aGk=", mime_type="image/png")

    @tool
    def picture() -> list[ImagePart]:
        return [image, image]

    @tool
    def custom() -> ToolResult:
        return ToolResult(call_id="ignored", content=[TextPart(text="custom")], is_error=True, notes=["n"])

    assert (await run(picture)).content == [image, image]
    result = await run(custom)
    assert (result.call_id, result.is_error, result.notes, result.server) == (
        "c1",
        True,
        ["n"],
        NATIVE_SOURCE,
    )
    assert result.content == [TextPart(text="custom")]
