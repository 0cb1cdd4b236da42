"""The servers' resources and prompts for the web page (see docs/http-api.md), and what a message attaches or
starts with: resources read and prompts got here, before the run starts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolbridge.config.agents import DEFAULT_MAX_RESULT_CHARS
from toolbridge.errors import ToolbridgeError
from toolbridge.server._errors import ApiError, read_body
from toolbridge.server._state import ServerState
from toolbridge.server.web.asks import asking_for_opening
from toolbridge.server.web.opening import Opening
from toolbridge.tools import ContentCatalog
from toolbridge.tools.resource_and_prompt_catalog import bounded_attachment
from toolbridge.types import AssistantMessage, ContentPart, Message, ResourcePart, UserMessage

__all__ = ["AttachedResource", "CompletionAsked", "Opening", "PromptChoice", "opening_of", "router"]

router = APIRouter(prefix="/api")

ServerQuery = Annotated[str | None, Query(description="Only this server's.")]


class AttachedResource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    uri: str = Field(min_length=1)
    server: str | None = None
    """None: the server that lists the URI."""


class PromptChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    server: str | None = None
    arguments: dict[str, str] = Field(default_factory=dict)


class CompletionAsked(BaseModel):
    """What is typed so far in one argument of a resource template or a prompt."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(min_length=1)
    template: str | None = None
    """A resource template's `uri_template`..."""
    prompt: str | None = None
    """... or a prompt's name."""
    argument: str = Field(min_length=1)
    value: str = ""
    context: dict[str, str] = Field(default_factory=dict)
    """The other arguments' values, for servers whose suggestions depend on them."""

    @model_validator(mode="after")
    def _names_one(self) -> CompletionAsked:
        if (self.template is None) == (self.prompt is None):
            raise ValueError("name either a resource 'template' or a 'prompt'")
        return self


@router.post("/completions")
async def complete_argument(request: Request) -> dict[str, Any]:
    body = await read_body(request, CompletionAsked)
    content = _content(request, body.server).server(body.server)
    context = body.context or None
    try:
        if body.template is not None:
            values = await content.complete_template_argument(
                body.template, body.argument, body.value, context=context
            )
        else:
            assert body.prompt is not None
            values = await content.complete_prompt_argument(
                body.prompt, body.argument, body.value, context=context
            )
    except ToolbridgeError as error:
        raise ApiError(502, f"server {body.server!r} could not complete {body.argument!r}: {error}") from None
    return {"values": values}


@router.get("/resources")
async def list_resources(request: Request, server: ServerQuery = None) -> dict[str, Any]:
    content = _content(request, server)
    resources = await content.resources(server)
    templates = await content.templates(server)
    return {
        "resources": [item.model_dump(mode="json") for item in resources.items],
        "templates": [item.model_dump(mode="json") for item in templates.items],
        "errors": {**templates.errors, **resources.errors},
    }


@router.get("/prompts")
async def list_prompts(request: Request, server: ServerQuery = None) -> dict[str, Any]:
    listing = await _content(request, server).prompts(server)
    return {"prompts": [item.model_dump(mode="json") for item in listing.items], "errors": listing.errors}


async def opening_of(
    content: ContentCatalog,
    text: str,
    attached: list[AttachedResource],
    prompt: PromptChoice | None,
    *,
    max_chars: int = DEFAULT_MAX_RESULT_CHARS,
    chat_id: int | None = None,
) -> Opening:
    """The message's text, resources and prompt as messages; a 422 naming what could not be read.

    An attachment is stored with the message and sent with every later turn, so it is bounded as the
    agent's tool results are (`max_chars`; see `ContentCatalog.attach`). A server that asks something
    first (`input_required`) is asked on chat `chat_id`'s page; an answer other than accept (or none in
    time) refuses the message with a 422 saying so (with no chat, its question is declined)."""
    attachments: list[ContentPart] = []
    for resource in attached:
        with _reading(chat_id, f"cannot attach {resource.uri!r}", "attachments"):
            attachments += await content.attach(resource.uri, server=resource.server, max_chars=max_chars)
    if prompt is None:
        return Opening(prompt=text, attachments=attachments)
    with _reading(chat_id, f"cannot get the prompt {prompt.name!r}", "prompt"):
        got = await content.get_prompt(prompt.name, prompt.arguments, server=prompt.server)
        messages = _bounded(got.messages, max_chars)
    if text.strip() or attachments or not messages:
        # The person wrote something too: it follows the prompt's messages.
        return Opening(before=messages, prompt=text, attachments=attachments)
    last = messages[-1]
    if isinstance(last, UserMessage):
        return Opening(before=messages[:-1], prompt=last.content, attachments=last.attachments)
    assert isinstance(last, AssistantMessage)
    return Opening(before=messages)


@contextmanager
def _reading(chat_id: int | None, failed: str, param: str) -> Iterator[None]:
    """Around one read of the opening: its server's questions asked on the chat's page; a 422 starting
    with `failed` when a question was not accepted (first: it is the cause) or the read fails."""
    with asking_for_opening(chat_id) if chat_id is not None else nullcontext() as questions:
        try:
            yield
        except ToolbridgeError as error:
            refused = questions.refused if questions is not None else None
            why = f"{refused} ({error})" if refused else str(error)
            raise ApiError(422, f"{failed}: {why}", param=param) from None
        if questions is not None and questions.refused is not None:
            raise ApiError(422, f"{failed}: {questions.refused}", param=param)


def _bounded(messages: list[Message], max_chars: int) -> list[Message]:
    """A prompt's messages, each resource embedded in them bounded as an attachment is (they are stored
    and sent with every later turn alike)."""
    bounded: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.attachments:
            parts: list[ContentPart] = []
            for part in message.attachments:
                parts += (
                    bounded_attachment(part.uri, [part], max_chars)
                    if isinstance(part, ResourcePart)
                    else [part]
                )
            message = message.model_copy(update={"attachments": parts})
        bounded.append(message)
    return bounded


def _content(request: Request, server: str | None) -> ContentCatalog:
    toolbox = ServerState.of(request).toolbox
    if server is not None and server not in toolbox.pool.names:
        known = ", ".join(toolbox.pool.names) or "none"
        raise ApiError(404, f"no MCP server named {server!r} (configured: {known})", param="server")
    return toolbox.content
