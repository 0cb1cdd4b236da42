"""The JSON API behind the web page (see docs/http-api.md): agents, chats and their messages, a chat's live events,
approvals, tools, servers and statistics."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from toolbridge._version import __version__
from toolbridge.config.agents import DEFAULT_MAX_RESULT_CHARS
from toolbridge.errors import ServerError
from toolbridge.runs.ledger import RunRecord
from toolbridge.server._access import caller_of, require_admin
from toolbridge.server._errors import ApiError, read_body
from toolbridge.server._state import ServerState
from toolbridge.server.web.resources import AttachedResource, PromptChoice, opening_of
from toolbridge.store import ChatSummary, StoreError, parse_since

__all__ = ["router"]


# Ids are 64-bit integers in every database; a larger one would overflow the query instead of missing.
ChatId = Annotated[int, Path(ge=1, le=2**63 - 1, description="A chat's id, from GET /api/chats.")]


async def _owned_chat(chat_id: ChatId, request: Request) -> ChatSummary:
    """The path's chat, checked on its parsed id (`+1`, `1.0` and ` 1` are all chat 1): with users, a
    chat is its user's (and admins'), and anyone else is told it does not exist."""
    return await ServerState.of(request).chats.get_chat(chat_id, caller_of(request))


OwnedChat = Annotated[ChatSummary, Depends(_owned_chat)]
"""The chat of a route under /api/chats/{chat_id} (the dependency runs once per request)."""

router = APIRouter(prefix="/api")
# Every route of one chat: the router's dependency checks the caller may see it, so none can forget to.
chat_router = APIRouter(prefix="/chats/{chat_id}", dependencies=[Depends(_owned_chat)])

MAX_CHATS_LISTED = 10_000


class NewChat(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str = "default"
    title: str | None = None
    model: str | None = None
    """One of GET /api/models; None: the agent's."""


class NewMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = ""
    attachments: list[AttachedResource] = Field(default_factory=list)
    """Resources to read and send with the message."""
    prompt: PromptChoice | None = None
    """A server's prompt whose messages the message starts with."""


class ChatChanges(BaseModel):
    """What changes: only the fields given."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=500)
    """The chat's new title; null goes back to its first message."""
    model: str | None = None
    """The model its next runs use, one of GET /api/models; null goes back to its agent's."""


class ApprovalAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    approved: bool
    for_chat: bool = False
    """With `approved`: the chat's later calls of the same tool run without asking."""


class ServerRequestAnswer(BaseModel):
    """The answer to a server's question: `accept` (a sampling approval, a form with its `content`, a
    URL the user opened), `decline` or `cancel`."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


def _chat_json(chat: ChatSummary) -> dict[str, Any]:
    return chat.model_dump(
        mode="json", include={"id", "title", "agent", "model", "answered_by", "message_count", "updated_at"}
    )


def _chosen_model(state: ServerState, name: str | None) -> str | None:
    """`name` when a chat may use it (the config's models; None: the agent's), else a 422 listing them."""
    choices = state.catalog.model_names()
    if name is None or name in choices:
        return name
    offered = (
        ", ".join(choices) or "none: the config has no `models` section, so chats use their agents' models"
    )
    raise ApiError(422, f"model {name!r} is not one a chat may use; the choices are {offered}", param="model")


@router.get("/models")
async def list_models(request: Request) -> dict[str, Any]:
    """The models a chat may be switched to (the config's `models`) and the config's default."""
    config = ServerState.of(request).catalog.config
    return {
        "models": [
            {"name": name, "provider": entry.provider, "model": entry.model}
            for name, entry in config.models.items()
        ],
        "default": config.default_model,
    }


@router.get("/agents")
async def list_agents(request: Request) -> list[dict[str, Any]]:
    agents = await ServerState.of(request).catalog.agents()
    return [
        {
            "name": agent.name,
            "description": agent.definition.description,
            "model": agent.definition.model,
            "source": agent.source,
            "problem": agent.problem,
        }
        for agent in agents
    ]


@router.get("/chats")
async def list_chats(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=MAX_CHATS_LISTED)] = 100,
    q: Annotated[
        str | None, Query(max_length=200, description="Only chats whose title or messages have this.")
    ] = None,
) -> list[dict[str, Any]]:
    state = ServerState.of(request)
    caller = caller_of(request)
    mine = None if caller.admin else caller.user_id
    chats = await anyio.to_thread.run_sync(
        lambda: state.store.list_chats(limit=limit, user_id=mine, containing=q or None)
    )
    last_runs = await anyio.to_thread.run_sync(state.chats.ledger.last_of, [chat.id for chat in chats])
    return [{**_chat_json(chat), "last_run": _run_json(last_runs.get(chat.id))} for chat in chats]


def _run_json(run: RunRecord | None) -> dict[str, Any] | None:
    """How the chat's latest run went (the page says so of one that was interrupted)."""
    if run is None:
        return None
    return {
        "id": run.id,
        "status": run.status,
        "ended_at": run.ended_at.isoformat() if run.ended_at else None,
    }


@router.post("/chats", status_code=201)
async def create_chat(request: Request) -> dict[str, Any]:
    body = await read_body(request, NewChat)
    state = ServerState.of(request)
    definition = await state.catalog.definition(body.agent, param="agent")
    model = _chosen_model(state, body.model)
    owner = caller_of(request).user_id
    chat = await anyio.to_thread.run_sync(
        lambda: state.store.create_chat(agent=definition.name, title=body.title, user_id=owner, model=model)
    )
    return _chat_json(chat)


@chat_router.patch("")
async def change_chat(chat: OwnedChat, request: Request) -> dict[str, Any]:
    """Rename the chat, or switch its model (its next run uses it)."""
    body = await read_body(request, ChatChanges)
    state = ServerState.of(request)
    store = state.store
    given = body.model_fields_set
    if not given:
        raise ApiError(400, "nothing to change: give a title or a model", param="title")
    model = _chosen_model(state, body.model) if "model" in given else None

    def change() -> ChatSummary:
        changed = chat
        if "title" in given:
            changed = store.rename_chat(chat.id, body.title)
        if "model" in given:
            changed = store.set_chat_model(chat.id, model)
        return changed

    return _chat_json(await anyio.to_thread.run_sync(change))


@chat_router.delete("", status_code=204)
async def delete_chat(chat: OwnedChat, request: Request) -> Response:
    state = ServerState.of(request)
    if await anyio.to_thread.run_sync(state.chats.ledger.current, chat.id) is not None:
        raise ApiError(409, f"chat {chat.id} has a run in progress: stop it (POST .../cancel) first")
    await anyio.to_thread.run_sync(state.store.delete_chat, chat.id)
    return Response(status_code=204)


@chat_router.get("/messages")
async def chat_messages(chat: OwnedChat, request: Request) -> list[dict[str, Any]]:
    stored = await anyio.to_thread.run_sync(ServerState.of(request).store.get_stored_messages, chat.id)
    # An answer says which model wrote it.
    return [
        {**one.message.model_dump(mode="json"), **({"model": one.model} if one.model else {})}
        for one in stored
    ]


@chat_router.post("/messages", status_code=202)
async def post_message(chat: OwnedChat, request: Request) -> dict[str, Any]:
    body = await read_body(request, NewMessage)
    if not body.content.strip() and body.prompt is None:
        raise ApiError(400, "the message is empty: write some text or choose a prompt", param="content")
    state = ServerState.of(request)
    max_chars = DEFAULT_MAX_RESULT_CHARS
    if body.attachments or body.prompt is not None:  # resources, bounded as the agent bounds tool results
        max_chars = (await state.catalog.definition(chat.agent or "default", param="agent")).max_result_chars
    opening = await opening_of(
        state.toolbox.content,
        body.content,
        body.attachments,
        body.prompt,
        max_chars=max_chars,
        chat_id=chat.id,
    )
    run_id = await state.chats.start_run(chat, opening, caller=caller_of(request))
    # The page shows a prompt's messages from here: they are history to the run, never its events.
    return {"run_id": run_id, "opening": [message.model_dump(mode="json") for message in opening.before]}


@chat_router.get("/events")
async def chat_events(chat: OwnedChat, request: Request) -> StreamingResponse:
    last_event_id = request.headers.get("last-event-id")
    if last_event_id is not None and not (last_event_id.isdigit() and int(last_event_id) < 2**63):
        raise ApiError(
            400, "Last-Event-ID must be the id of an event this stream sent", param="Last-Event-ID"
        )
    resume = int(last_event_id) if last_event_id is not None else None
    stream = await ServerState.of(request).chats.events(chat, last_event_id=resume)
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@chat_router.post("/approvals/{call_id}", status_code=204)
async def answer_approval(chat: OwnedChat, call_id: str, request: Request) -> Response:
    body = await read_body(request, ApprovalAnswer)
    if body.for_chat and not body.approved:
        raise ApiError(
            400, "for_chat allows a tool for the chat: send it with approved: true", param="for_chat"
        )
    await ServerState.of(request).chats.approvals.answer(chat, call_id, body.approved, for_chat=body.for_chat)
    return Response(status_code=204)


@chat_router.post("/server-requests/{request_id}", status_code=204)
async def answer_server_request(chat: OwnedChat, request_id: str, request: Request) -> Response:
    body = await read_body(request, ServerRequestAnswer)
    await ServerState.of(request).asker.answer(chat.id, request_id, body.action, body.content)
    return Response(status_code=204)


@chat_router.post("/cancel", status_code=204)
async def cancel_run(chat: OwnedChat, request: Request) -> Response:
    await ServerState.of(request).chats.cancel(chat)
    return Response(status_code=204)


@router.get("/tools")
async def list_tools(request: Request, agent: str | None = None) -> list[dict[str, Any]]:
    state = ServerState.of(request)
    tools = await state.toolbox.list_tools()
    if agent is not None:
        tools = (await state.catalog.definition(agent, param="agent")).select_tools(tools)
    return [tool.model_dump(mode="json") for tool in tools]


@router.get("/servers")
async def list_servers(request: Request) -> list[dict[str, Any]]:
    statuses = await ServerState.of(request).toolbox.server_status()
    return [status.model_dump(mode="json") for status in statuses]


@router.get("/servers/{name}/logs")
async def server_logs(name: str, request: Request) -> list[dict[str, Any]]:
    """The last messages server `name` logged to toolbridge (connecting it if it is not yet). Admins only:
    a server's log may carry any user's arguments and results."""
    require_admin(request, "read an MCP server's log")
    toolbox = ServerState.of(request).toolbox
    if name not in toolbox.pool.names:
        raise ApiError(404, f"no MCP server named {name!r} is configured", param="name")
    try:
        entries = await toolbox.server_logs(name)
    except ServerError as error:
        raise ApiError(502, str(error), code="server_unavailable") from None
    return [asdict(entry) for entry in entries]


@router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    """What is wrong beyond the MCP servers (whether the store can be written), and for the page's
    Settings view which toolbridge answers and who the request was made as (`user` is null without
    users, or with the server's token)."""
    caller = caller_of(request)
    return {
        "store": ServerState.of(request).store.health().model_dump(mode="json"),
        "version": __version__,
        "caller": {"user": caller.name, "admin": caller.admin},
    }


@router.get("/stats")
async def tool_stats(request: Request, since: str | None = None) -> list[dict[str, Any]]:
    store = ServerState.of(request).store
    try:
        start = parse_since(since) if since else None
    except StoreError as error:
        raise ApiError(400, str(error), param="since") from None
    caller = caller_of(request)
    mine = None if caller.admin else caller.user_id  # with users, a user's own calls only
    stats, charts = await anyio.to_thread.run_sync(
        lambda: (store.tool_stats(since=start, user_id=mine), store.tool_charts(since=start, user_id=mine))
    )
    # The page's charts ride along with each tool's figures.
    drawn = {
        (c.tool, c.server): c.model_dump(mode="json", include={"latency", "calls_over_time"}) for c in charts
    }
    return [{**entry.model_dump(mode="json"), **drawn.get((entry.tool, entry.server), {})} for entry in stats]


router.include_router(chat_router)  # last: FastAPI before 0.165 copies the routes it has then
