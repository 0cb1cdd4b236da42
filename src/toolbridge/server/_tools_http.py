"""Tools over plain HTTP: `POST /tools/{name}` runs one tool, `GET /openapi.json` describes them all.

What mcpo does for Open WebUI and any OpenAPI client, on the same app: the same token, Host and Origin
checks and body limit. Calls go through the registry (validation, timeouts, the result cache) and into
the call log as `caller: "openapi"`. The `default` agent's tool rules hold here as on /v1: only the tools
it offers (`servers`, `tools.allow` / `tools.deny`) are listed and callable. Nobody can be asked to
approve a call here, so one that its approval policy holds back is refused unless `server.auto_approve`
is true.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from toolbridge.server._access import caller_of
from toolbridge.server._errors import ApiError, error_response, read_json
from toolbridge.server._state import ServerState
from toolbridge.server._tools_openapi import TOOL_PATH_PREFIX, ToolAnswer, tools_document
from toolbridge.store import StoreError, ToolCallLogEntry
from toolbridge.tools import closest_names
from toolbridge.types import ToolCall, ToolErrorKind, ToolResult, ToolSpec

__all__ = ["router"]

_log = logging.getLogger(__name__)

router = APIRouter()

# Every failed call is an error status, so a client that checks the status never takes a failure for
# a result: what the caller must change is a 4xx, what failed beyond it a 5xx.
_STATUS_OF_KIND: dict[ToolErrorKind, int] = {
    "unknown_tool": 404,
    "invalid_arguments": 422,
    "denied": 403,
    "server_error": 502,
    "cut_off": 502,
    "server_unavailable": 503,
    "cancelled": 503,
    "timeout": 504,
}
_APPROVAL_REQUIRED = "approval_required"


@router.get("/openapi.json", include_in_schema=False)
async def openapi_document(request: Request) -> dict[str, Any]:
    state = ServerState.of(request)
    return tools_document(await _offered(state), bearer=state.settings.token is not None)


@router.post(TOOL_PATH_PREFIX + "{name:path}", include_in_schema=False)
async def call_tool(request: Request, name: str) -> JSONResponse:
    state = ServerState.of(request)
    raw = await request.body()
    arguments = read_json(raw) if raw.strip() else {}  # no body: no arguments
    if not isinstance(arguments, dict):
        raise ApiError(
            400,
            f"the request body must be a JSON object of the tool's arguments, not {_json_type(arguments)}; "
            "send {} for a tool without arguments",
            code="invalid_arguments",
        )
    started_at, started = datetime.now(UTC), time.perf_counter()
    call = ToolCall(name=name, arguments=arguments)
    tool = await state.toolbox.registry.find(name)
    default = await state.catalog.definition("default", param="name")
    if tool is None or not default.offers(tool):
        names = [tool.name for tool in await _offered(state)]
        message = _unknown(name, names, state.toolbox.registry.server_errors, left_out=tool is not None)
        result = ToolResult.error(call.id, message, kind="unknown_tool")
    elif (reason := await _needs_approval(state, tool)) is not None:
        result = ToolResult.error(
            call.id,
            f"{name!r} needs approval ({reason}), and nobody can be asked over HTTP; set "
            '"server": {"auto_approve": true} in the config to run such calls, or change the `default` '
            "agent's approval rules",
            kind="denied",
            server=tool.source,
        )
    else:
        result = await _call_until_hang_up(request, state, call, tool)
    result = result.model_copy(update={"duration": result.duration or time.perf_counter() - started})
    await _log_call(state, call, result, started_at, user_id=caller_of(request).user_id)
    return _answer(result)


async def _call_until_hang_up(
    request: Request, state: ServerState, call: ToolCall, tool: ToolSpec
) -> ToolResult:
    """The call's result; cancelled (at the server too) when the client hangs up first."""
    result: ToolResult | None = None
    async with anyio.create_task_group() as group:

        async def cancel_on_hang_up() -> None:
            # The body is read: what comes next is the disconnect.
            while (await request.receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(cancel_on_hang_up)
        result = await state.toolbox.registry.call(call)
        group.cancel_scope.cancel()
    if result is None:
        message = "the client hung up; the call was cancelled"
        return ToolResult.error(call.id, message, kind="cancelled", server=tool.source)
    return result


async def _offered(state: ServerState) -> list[ToolSpec]:
    """The tools the `default` agent offers: what may be listed and called here."""
    default = await state.catalog.definition("default", param="name")
    return default.select_tools(await state.toolbox.list_tools())


async def _needs_approval(state: ServerState, tool: ToolSpec) -> str | None:
    if state.settings.auto_approve:
        return None
    definition = await state.catalog.definition("default", param="name")
    return definition.approval.approval_reason(tool)


def _unknown(name: str, names: list[str], down: dict[str, str], *, left_out: bool) -> str:
    close = closest_names(name, names)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    if left_out:
        return (
            f"no tool named {name!r} is offered here: the `default` agent's tool rules (its `servers`, "
            f"`tools.allow` and `tools.deny`) leave it out; {hint}GET /openapi.json lists the "
            f"{len(names)} tools"
        )
    message = f"no tool named {name!r}; {hint}GET /openapi.json lists the {len(names)} tools"
    if down:
        # The tool may be one of theirs.
        message += f" (servers unavailable, whose tools are not listed: {', '.join(sorted(down))})"
    return message


async def _log_call(
    state: ServerState, call: ToolCall, result: ToolResult, started_at: datetime, *, user_id: int | None
) -> None:
    entry = ToolCallLogEntry.from_result(call, result, started_at=started_at, caller="openapi")
    entry = entry.model_copy(update={"user_id": user_id})  # with users, the caller's key's
    try:
        await anyio.to_thread.run_sync(state.store.log_tool_call, entry)
    except StoreError as error:
        # The answer outweighs its record: the store reports itself degraded (`GET /api/health`).
        _log.debug("not recorded: %s", error)


def _answer(result: ToolResult) -> JSONResponse:
    if not result.is_error:
        answer = ToolAnswer(
            text=result.text,
            content=result.content,
            structured_content=result.structured_content,
            server=result.server,
            duration=result.duration,
            cached=result.cached,
            notes=result.notes,
        )
        return JSONResponse(answer.model_dump(mode="json"))
    kind = result.error_kind or "server_error"
    code = _APPROVAL_REQUIRED if kind == "denied" else kind
    return error_response(_STATUS_OF_KIND[kind], result.text, code=code)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"
