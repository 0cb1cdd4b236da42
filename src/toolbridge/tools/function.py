"""Python functions as tools: the one interface for toolbridge's native tools and for the user's own.

```python
@tool
def word_count(text: str, unique: bool = False) -> int:
    \"\"\"Count the words in a text.

    Args:
        text: The text to count.
        unique: Count each distinct word once.
    \"\"\"
```

The input schema comes from the type hints (through pydantic, so `Literal`, `Enum`, `Optional`, defaults
and pydantic models work), the description and the parameter descriptions from the docstring (its text
before any section, and a Google-style `Args:` section). Sync functions run in a worker thread so they
never block the event loop. What the function returns becomes the result's content; an exception it
raises becomes an error result carrying its message, because tool errors are data the model can read.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any, cast, get_type_hints, overload

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from toolbridge.errors import UsageError
from toolbridge.types import (
    NATIVE_SOURCE,
    AudioPart,
    ContentPart,
    ImagePart,
    ResourcePart,
    TextPart,
    ToolAnnotations,
    ToolCall,
    ToolErrorKind,
    ToolResult,
    ToolSpec,
)

__all__ = ["FunctionTool", "tool"]

logger = logging.getLogger("toolbridge.tools")

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What every provider accepts as a function name (OpenAI's rule is the strictest)."""

_SECTION_HEADER = re.compile(r"^(\w[\w ]*):\s*$")
_ARGS_HEADERS = frozenset({"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"})
_PARAM_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")

_CONTENT_PARTS = (TextPart, ImagePart, AudioPart, ResourcePart)


class FunctionTool:
    """A Python function (sync or async) exposed as a tool. Build one with `tool` or `from_function`.

    Calling the object calls the function directly, so a decorated function stays usable as before.
    """

    def __init__(
        self, function: Callable[..., Any], spec: ToolSpec, arguments_model: type[BaseModel]
    ) -> None:
        self.function = function
        self.spec = spec
        self._arguments_model = arguments_model
        self._is_async = inspect.iscoroutinefunction(function)
        functools.update_wrapper(self, function)

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> FunctionTool:
        """Describe `function` as a tool; `name` and `description` default to its name and docstring."""
        tool_name = name if name is not None else function.__name__
        if not _TOOL_NAME.fullmatch(tool_name):
            raise UsageError(
                f"Tool name {tool_name!r} is not usable: names need 1-64 letters, digits, '_' or '-'. "
                "Pass name=... to give the tool a valid name."
            )
        summary, parameter_docs = parse_docstring(inspect.getdoc(function) or "")
        arguments_model = _arguments_model(function, tool_name, parameter_docs)
        spec = ToolSpec(
            name=tool_name,
            title=title,
            description=description if description is not None else summary,
            input_schema=_clean_schema(arguments_model.model_json_schema(by_alias=True)),
            annotations=annotations or ToolAnnotations(),
            source=NATIVE_SOURCE,
        )
        return cls(function, spec, arguments_model)

    @property
    def name(self) -> str:
        return self.spec.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self.spec.name!r})"

    async def run(self, call: ToolCall) -> ToolResult:
        """Run the function with the call's arguments. Never raises for a failure inside the tool."""
        started = time.perf_counter()

        def error(message: str, kind: ToolErrorKind) -> ToolResult:
            return ToolResult.error(
                call.id, message, kind=kind, server=NATIVE_SOURCE, duration=time.perf_counter() - started
            )

        try:
            validated = self._arguments_model.model_validate(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"at '{'.'.join(str(p) for p in e['loc']) or '(arguments)'}': {e['msg']}"
                for e in exc.errors()
            )
            return error(
                f"Invalid arguments for tool {self.spec.name!r}: {problems}. "
                "Call the tool again with corrected arguments.",
                "invalid_arguments",
            )
        # Pass what the model gave plus defaults; field names are aliased to the parameter names.
        kwargs = {
            field.alias or key: getattr(validated, key) for key, field in type(validated).model_fields.items()
        }
        try:
            if self._is_async:
                value = await self.function(**kwargs)
            else:
                # A hung sync tool must not hold the caller's timeout hostage; its thread is abandoned.
                value = await anyio.to_thread.run_sync(
                    functools.partial(self.function, **kwargs), abandon_on_cancel=True
                )
        except Exception as exc:  # the tool's failure is the model's information, not our crash
            logger.debug("tool %r raised", self.spec.name, exc_info=True)
            return error(_exception_message(exc), "server_error")
        return _to_result(value, call.id, duration=time.perf_counter() - started)


@overload
def tool(
    function: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    annotations: ToolAnnotations | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a function a tool: `@tool`, `@tool(name=..., annotations=...)` or `tool(func, name=...)`."""

    def decorate(func: Callable[..., Any]) -> FunctionTool:
        return FunctionTool.from_function(
            func, name=name, description=description, title=title, annotations=annotations
        )

    return decorate(function) if function is not None else decorate


# -- schema -----------------------------------------------------------------------------------------


def _arguments_model(
    function: Callable[..., Any], tool_name: str, parameter_docs: dict[str, str]
) -> type[BaseModel]:
    try:
        hints = get_type_hints(function, include_extras=True)
    except Exception as exc:
        raise UsageError(f"Cannot read the type hints of tool {tool_name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    for index, parameter in enumerate(inspect.signature(function).parameters.values()):
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise UsageError(
                f"Tool {tool_name!r}: *{parameter.name} / **{parameter.name} cannot be described to a model; "
                "give the function named parameters instead."
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise UsageError(
                f"Tool {tool_name!r}: parameter {parameter.name!r} is positional-only; tools are called "
                "with named arguments, so remove the '/' from the signature."
            )
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        # Field names are neutral and aliased, so parameters like `json` or `model_config` can't clash
        # with BaseModel's own attributes.
        options: dict[str, Any] = {"alias": parameter.name}
        if parameter.name in parameter_docs:
            # Only when documented: a None description would hide one given with Annotated[..., Field()].
            options["description"] = parameter_docs[parameter.name]
        fields[f"p{index}"] = (hints.get(parameter.name, Any), Field(default, **options))
    return create_model(
        f"{tool_name}_arguments",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **fields,
    )


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated titles: they repeat the names and cost the model tokens."""

    def clean(node: Any, *, in_properties: bool = False) -> Any:
        if isinstance(node, dict):
            return {
                key: clean(value, in_properties=key in ("properties", "$defs") and not in_properties)
                for key, value in node.items()
                if in_properties or key != "title"
            }
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    cleaned: dict[str, Any] = clean(schema)
    cleaned.setdefault("properties", {})
    return cleaned


def parse_docstring(docstring: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description (text before any section) and its `Args:` entries."""
    description: list[str] = []
    parameters: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    entry_indent = 0
    for line in inspect.cleandoc(docstring).splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        header = _SECTION_HEADER.match(line)
        if header and indent == 0:
            section, current = header.group(1), None
            continue
        if section is None:
            description.append(line)
        elif section in _ARGS_HEADERS and stripped:
            match = _PARAM_LINE.match(stripped)
            if match and (current is None or indent <= entry_indent):
                current, entry_indent = match.group(1), indent
                parameters[current] = match.group(2).strip()
            elif current is not None:  # a continuation line of the previous entry
                parameters[current] = f"{parameters[current]} {stripped}".strip()
    return "\n".join(description).strip(), parameters


# -- results ----------------------------------------------------------------------------------------


def _exception_message(exc: Exception) -> str:
    # ValueError and its kind are the tools' way to say "your input was wrong": show the message as is.
    if isinstance(exc, ValueError) and str(exc):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _to_result(value: Any, call_id: str, *, duration: float) -> ToolResult:
    if isinstance(value, ToolResult):
        return value.model_copy(
            update={"call_id": call_id, "server": value.server or NATIVE_SOURCE, "duration": duration}
        )
    content: list[ContentPart] = []
    structured: dict[str, Any] | None = None
    if value is None:
        pass
    elif isinstance(value, str):
        content = [TextPart(text=value)]
    elif isinstance(value, _CONTENT_PARTS):
        content = [value]
    elif isinstance(value, list) and value and all(isinstance(v, _CONTENT_PARTS) for v in value):
        content = cast(list[ContentPart], list(value))
    else:
        try:
            data = to_jsonable_python(value)
        except PydanticSerializationError:
            data = str(value)
        if isinstance(data, str):
            content = [TextPart(text=data)]
        else:
            # MCP's structured content is an object; other JSON values are wrapped, as MCP servers do.
            structured = data if isinstance(data, dict) else {"result": data}
            content = [TextPart(text=json.dumps(data, ensure_ascii=False))]
    return ToolResult(
        call_id=call_id,
        content=content,
        structured_content=structured,
        server=NATIVE_SOURCE,
        duration=duration,
    )
