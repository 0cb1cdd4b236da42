"""The client's tools, checked and built once per distinct definition rather than on every request.

A pass-through client sends the same `tools` with every request, each time as new dicts. Checking a
schema against its meta-schema and compiling its argument validator cost more than all the request's
other work, so a tool seen before is answered from here as the very `ToolSpec` built then; the
argument validator, which keeps compiled schemas by identity, then finds its schema compiled too.

Definitions not seen before are checked in a worker thread when they are big: thousands of tools'
schemas checked on the event loop held every other request up for seconds. The cache itself is only
touched on the event loop.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from toolbridge.server._errors import ApiError
from toolbridge.tools import schema_problem
from toolbridge.types import ToolSpec

__all__ = ["MAX_CLIENT_TOOLS", "ToolDefinition", "checked_tools", "client_tool", "client_tools"]

MAX_CLIENT_TOOLS = 512
"""Tools one request may bring: four times what OpenAI's own API takes (128), and a bound on the work of
checking their schemas (thousands held the server up for seconds)."""

_CACHE_SIZE = 512
_CHECKED_ON_LOOP = 32_768
"""Characters of JSON (of definitions not seen before) checked on the event loop; more go to a thread."""

Definition = tuple[str, str, dict[str, Any]]
"""A tool's name, description and parameters' schema."""
Built = tuple[ToolSpec, str | None]
"""The tool, and why its schema is not a valid JSON Schema (None: it is)."""

_known: OrderedDict[str, Built] = OrderedDict()


@dataclass(frozen=True)
class ToolDefinition:
    """A tool as a request brought it, in any API's terms."""

    name: str
    description: str
    schema: dict[str, Any]
    where: str
    """Where the tool is in the request, for errors: `tools.3.function`."""
    schema_field: str = "parameters"


async def checked_tools(definitions: Sequence[ToolDefinition], *, brought: int) -> list[ToolSpec]:
    """The client's tools as `ToolSpec`s, once checked: at most `MAX_CLIENT_TOOLS` (`brought`: how many
    the request has, those left out included), each named once, each schema a valid JSON Schema."""
    if brought > MAX_CLIENT_TOOLS:
        raise ApiError(
            400,
            f"the request has {brought} tools, but a request may bring at most {MAX_CLIENT_TOOLS}; send "
            "only the tools this conversation needs",
            param="tools",
        )
    built = await client_tools([(tool.name, tool.description, tool.schema) for tool in definitions])
    specs: dict[str, ToolSpec] = {}
    for tool, (spec, problem) in zip(definitions, built, strict=True):
        if tool.name in specs:
            raise ApiError(
                400,
                f"two tools are named {tool.name!r}; give each tool its own name",
                param=f"{tool.where}.name",
            )
        if problem:
            raise ApiError(
                400,
                f"the {tool.schema_field} of tool {tool.name!r} are not a valid JSON Schema: {problem}",
                param=f"{tool.where}.{tool.schema_field}",
            )
        specs[tool.name] = spec
    return list(specs.values())


def client_tool(name: str, description: str, schema: dict[str, Any]) -> Built:
    """The tool, and why its `schema` is not a valid JSON Schema (None: it is)."""
    key = _key((name, description, schema))
    built = _recall(key)
    if built is None:
        built = _build((name, description, schema))
        _remember(key, built)
    return built


async def client_tools(definitions: Sequence[Definition]) -> list[Built]:
    """Each definition's tool and schema problem, as `client_tool` gives them; new definitions past
    `_CHECKED_ON_LOOP` characters are checked in a worker thread."""
    keys = [_key(definition) for definition in definitions]
    found = [_recall(key) for key in keys]
    new = [index for index, built in enumerate(found) if built is None]
    if not new:
        return [built for built in found if built is not None]
    # A definition json cannot encode (nested past the stack) counts as big.
    size = sum(len(key) if key is not None else _CHECKED_ON_LOOP + 1 for key in (keys[i] for i in new))
    unseen = [definitions[index] for index in new]
    if size > _CHECKED_ON_LOOP:
        built_now = await anyio.to_thread.run_sync(_build_all, unseen)
    else:
        built_now = _build_all(unseen)
    for index, built in zip(new, built_now, strict=True):
        found[index] = built
        _remember(keys[index], built)
    return [built for built in found if built is not None]


def _key(definition: Definition) -> str | None:
    try:
        return json.dumps(definition, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None


def _recall(key: str | None) -> Built | None:
    if key is None:
        return None
    known = _known.get(key)
    if known is not None:
        _known.move_to_end(key)
    return known


def _remember(key: str | None, built: Built) -> None:
    if key is None:
        return
    _known[key] = built
    if len(_known) > _CACHE_SIZE:
        _known.popitem(last=False)


def _build_all(definitions: Sequence[Definition]) -> list[Built]:
    return [_build(definition) for definition in definitions]


def _build(definition: Definition) -> Built:
    name, description, schema = definition
    return ToolSpec(name=name, description=description, input_schema=schema), schema_problem(schema)
