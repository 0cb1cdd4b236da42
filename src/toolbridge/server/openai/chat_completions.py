"""`POST /v1/chat/completions` and `GET /v1/models`: any OpenAI client or chat UI, with MCP tools.

`model` names an agent. The whole tool loop runs here; the client gets the final answer, and (unless
`server.tool_activity` is false) each tool call as `reasoning_content`, which chat UIs show as thinking.
Calls that need approval are declined unless `server.auto_approve` is true: nobody can be asked.
Client `tools` are offered to the agent's model too; a call to one pauses the run and goes back to the
client, whose posted results resume it (`mixed`, `agent_answer`).

When `model` names a model and no agent, the request is passed through instead: the client's own tools
go to the model and its calls come back to the client (`passthrough`).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from toolbridge.server._access import caller_of
from toolbridge.server._errors import api_error_response, error_body, read_body
from toolbridge.server._event_stream import EventStreamResponse
from toolbridge.server._limits import RUN_HOLD
from toolbridge.server._metering import RunMeter
from toolbridge.server._state import ServerState
from toolbridge.server.openai.agent_answer import ApiRequest, start_answer
from toolbridge.server.openai.passthrough import (
    Answerer,
    MeteredAnswer,
    stream_completion,
    whole_completion,
)
from toolbridge.server.openai.passthrough_wire import client_messages, client_settings, client_tools
from toolbridge.server.openai.wire import ChatCompletionRequest, CompletionIds

__all__ = ["router"]

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/v1")


@router.get("/models")
async def list_models(request: Request) -> dict[str, Any]:
    state = ServerState.of(request)
    agents = await state.catalog.agents()
    models = [
        {"id": agent.name, "object": "model", "created": 0, "owned_by": "toolbridge"}
        for agent in agents
        if agent.problem is None
    ]
    # Then the models a request may pass through to; an agent of the same name wins.
    agent_names = {agent.name for agent in agents}
    models += [
        {"id": name, "object": "model", "created": 0, "owned_by": "toolbridge"}
        for name in state.catalog.model_names()
        if name not in agent_names
    ]
    # Beside the list OpenAI clients read, so one broken agent is reported without breaking them.
    invalid = [{"id": agent.name, "error": agent.problem} for agent in agents if agent.problem is not None]
    return {"object": "list", "data": models, **({"invalid_agents": invalid} if invalid else {})}


@router.post("/chat/completions", response_model=None)
async def chat_completions(request: Request) -> Response:
    body = await read_body(request, ChatCompletionRequest)
    state = ServerState.of(request)
    caller = caller_of(request)
    asked = body.max_completion_tokens or body.max_tokens or 0
    meter = await RunMeter.open(state.chats.limits, caller.name, caller.user_id, hold=max(RUN_HOLD, asked))
    ids = CompletionIds(body.model)
    try:
        tools = await client_tools(body)
        answer = await start_answer(
            state,
            caller,
            meter,
            ApiRequest(
                body.model,
                client_messages(body),
                tools,
                client_settings(body, tools),
                run_id=ids.id,
                param="messages",
            ),
        )
    except BaseException:
        await meter.close()
        raise
    return await _respond(MeteredAnswer(answer, meter), body, ids)


async def _respond(answer: Answerer, body: ChatCompletionRequest, ids: CompletionIds) -> Response:
    if not body.stream:
        return await whole_completion(answer, ids)
    include_usage = body.stream_options is not None and body.stream_options.include_usage
    return EventStreamResponse(
        lambda sink: stream_completion(answer, ids, sink, include_usage=include_usage),
        refusal=api_error_response,
        failure=lambda message: (error_body(500, message, code="run_failed"), None),
        done=True,
    )
