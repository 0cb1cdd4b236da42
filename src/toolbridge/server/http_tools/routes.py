"""Tools over plain HTTP: `POST /tools/{name}` runs one tool, `GET /openapi.json` describes them all.

What mcpo does for Open WebUI and any OpenAPI client, on the same app: the same token, Host and Origin
checks and body limit. Calls go through the call pipeline (`toolbridge.tools.pipeline`: validation,
timeouts, the result cache, the call log as `caller: "openapi"`, spans and metrics) for the `default`
agent's rules, as on /v1: only the tools it offers (`servers`, `tools.allow` / `tools.deny`) are listed
and callable. Nobody can be asked to approve a call here, so one that its approval policy holds back is
refused unless `server.auto_approve` is true.
"""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from toolbridge.server._access import caller_of
from toolbridge.server._errors import ApiError, error_response, read_json
from toolbridge.server._state import ServerState
from toolbridge.server.http_tools.openapi import TOOL_PATH_PREFIX, ToolAnswer, tools_document
from toolbridge.tools import CallContext, ToolPipeline
from toolbridge.types import ToolCall, ToolErrorKind, ToolResult, ToolSpec

__all__ = ["router"]

router = APIRouter()

# Every failed call is an error status, so a client that checks the status never takes a failure for
# a result: what the caller must change is a 4xx, what failed beyond it a 5xx.
_STATUS_OF_KIND: dict[ToolErrorKind, int] = {
    "unknown_tool": 404,
    "not_allowed": 403,
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
    default = await state.catalog.definition("default", param="name")
    context = CallContext(
        caller="openapi",
        user_id=caller_of(request).user_id,  # with users, the caller's key's
        allows=default.why_not_offered,
        # Nobody can be asked here (`approve` is None): a call the policy holds back is refused.
        approval=None if state.settings.auto_approve else default.approval,
    )
    call = ToolCall(name=name, arguments=arguments)
    return _answer(await _call_until_hang_up(request, state.toolbox.calls, call, context))


async def _call_until_hang_up(
    request: Request, pipeline: ToolPipeline, call: ToolCall, context: CallContext
) -> ToolResult:
    """The call's result; cancelled (at the server too, and logged so) when the client hangs up first."""
    result: ToolResult | None = None
    async with anyio.create_task_group() as group:

        async def cancel_on_hang_up() -> None:
            # The body is read: what comes next is the disconnect.
            while (await request.receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(cancel_on_hang_up)
        result = (await pipeline.call(call, context)).result
        group.cancel_scope.cancel()
    if result is None:  # an answer nobody reads: the client is gone
        return ToolResult.error(call.id, "The call was cancelled.", kind="cancelled")
    return result


async def _offered(state: ServerState) -> list[ToolSpec]:
    """The tools the `default` agent offers: what may be listed and called here."""
    default = await state.catalog.definition("default", param="name")
    return default.select_tools(await state.toolbox.list_tools())


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
