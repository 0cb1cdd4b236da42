"""Servers' questions on the web page: a sampling approval or an elicitation form shown in the card of
the tool call that is waiting on that server, answered over HTTP.

A question goes to the chat whose run has a call in flight on the asking server. When no chat does
(the call came through the OpenAI endpoint, which answers programs) or several do (nobody can tell
which one asked), the question is declined, saying why.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp_types as mcp

from toolbridge.agent import ElicitationRequest, NobodyToAsk, SamplingRequest
from toolbridge.mcp.elicitation_form import ElicitationForm, FormError, FormField
from toolbridge.server._chats import ChatHub
from toolbridge.server._errors import ApiError

__all__ = ["WebAsker"]

Action = Literal["accept", "decline", "cancel"]

_CALL_START_GRACE = 2.0
"""Seconds a question waits for its chat to see the call it belongs to start."""


@dataclass
class _Question:
    chat_id: int
    form: ElicitationForm | None
    answered: anyio.Event = field(default_factory=anyio.Event)
    action: Action = "cancel"
    content: dict[str, Any] | None = None


class WebAsker:
    """A `UserAsker` for `toolbridge serve`; `hub` is set once the chats exist."""

    def __init__(self, *, timeout: float) -> None:
        self.hub: ChatHub | None = None
        self._timeout = timeout
        self._questions: dict[str, _Question] = {}
        self._url_asked_in: dict[tuple[str, str], tuple[int, str]] = {}
        """(server, elicitation id) -> (chat, call) of the URL questions accepted."""

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        preview = [{"role": role, "text": text} for role, text in request.preview()]
        details = {"kind": "sampling", "model": request.model, "max_tokens": request.params.max_tokens}
        action, _ = await self._ask(request.server, None, {**details, "preview": preview})
        return action == "accept"

    async def elicit(self, request: ElicitationRequest) -> mcp.ElicitResult:
        if request.form is not None:
            fields = [_field(f) for f in request.form.fields]
            details: dict[str, Any] = {"kind": "form", "message": request.message, "fields": fields}
        else:
            details = {
                "kind": "url",
                "message": request.message,
                "url": request.url,
                "elicitation_id": request.elicitation_id,
            }
        action, content = await self._ask(request.server, request.form, details)
        return mcp.ElicitResult(action=action, content=content)

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        # To the card that showed the URL, even if its call has ended meanwhile.
        asked = self._url_asked_in.pop((server, elicitation_id), None)
        if self.hub is None or asked is None:
            return
        chat_id, call_id = asked
        event = {"type": "server_request_completed", "server": server, "elicitation_id": elicitation_id}
        self.hub.publish(chat_id, json.dumps({**event, "call_id": call_id}))

    async def answer(
        self, chat_id: int, request_id: str, action: Action, content: dict[str, Any] | None
    ) -> None:
        """The page's answer; a form that does not fit its schema is refused (422) and stays open."""
        question = self._questions.get(request_id)
        if question is None or question.chat_id != chat_id or question.answered.is_set():
            raise ApiError(404, f"no server request {request_id!r} is waiting in chat {chat_id}")
        if action == "accept" and question.form is not None:
            try:
                content = dict(question.form.complete(content or {}))
            except FormError as exc:
                raise ApiError(422, str(exc), param="content") from None
        question.action, question.content = action, content if action == "accept" else None
        question.answered.set()

    async def _ask(
        self, server: str, form: ElicitationForm | None, details: dict[str, Any]
    ) -> tuple[Action, dict[str, Any] | None]:
        calls = await self._calls_on(server)
        if len(calls) != 1:
            reason = "no chat on the web page is waiting on it" if not calls else "several chats are using it"
            raise NobodyToAsk(
                f"toolbridge serve has nobody to ask ({reason}; the OpenAI endpoint answers programs)"
            )
        assert self.hub is not None
        [(chat_id, call_id)] = calls
        request_id = uuid.uuid4().hex
        question = self._questions[request_id] = _Question(chat_id=chat_id, form=form)
        event = {"type": "server_request", "request_id": request_id, "call_id": call_id, "server": server}
        self.hub.publish(chat_id, json.dumps({**event, **details}))
        try:
            with anyio.move_on_after(self._timeout):
                await question.answered.wait()
        finally:
            del self._questions[request_id]
            answered = {"type": "server_request_answered", "request_id": request_id, "call_id": call_id}
            self.hub.publish(chat_id, json.dumps({**answered, "action": question.action}))
        if details.get("elicitation_id") and question.action == "accept":
            self._url_asked_in[(server, details["elicitation_id"])] = (chat_id, call_id)
        return question.action, question.content

    async def _calls_on(self, server: str) -> list[tuple[int, str]]:
        """The chats' calls in flight on `server`; a question may arrive just before its chat has seen
        its call start, so an empty answer waits a moment for a call to start."""
        if self.hub is None:
            return []
        with anyio.move_on_after(_CALL_START_GRACE):
            while not self.hub.calls_on(server):
                await self.hub.calls_changed.wait()
        return self.hub.calls_on(server)


def _field(form_field: FormField) -> dict[str, Any]:
    return {
        "name": form_field.name,
        "kind": form_field.kind,
        "title": form_field.title,
        "description": form_field.description,
        "required": form_field.required,
        "default": form_field.default,
        "choices": [{"value": value, "label": label} for value, label in form_field.choices],
        "hint": form_field.hint(),
    }
