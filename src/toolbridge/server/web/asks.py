"""Servers' questions on the web page: a sampling approval or an elicitation form shown in the card of
the tool call that is waiting on that server, answered over HTTP.

A question goes to the chat whose run made the call the server asked during (see
`toolbridge.mcp.calls_in_flight`), in that call's card. It is declined, saying why, when the call came
through the OpenAI endpoint (which answers programs), or when the server asked outside any call or
during one of several calls on the same session that cannot be told apart (over stdio or SSE).

A question asked while a message's opening is read (a prompt got, a resource attached: on 2026-07-28 a
server may answer those with `input_required`, no call in flight) goes to the chat that posts the message
(`asking_for_opening`), as a standalone form on its page (`"opening": true`, no call id); what was not
accepted is kept in `OpeningQuestions.refused`, and the message is refused with it. Such a question lives
on the replica reading the opening only: no run exists yet whose event rows another replica could read.

The answer may reach any replica on the database: one that does not run the chat finds the question
waiting in the event rows, checks a form's answer against the fields the event carries, and leaves it as
an `answer` signal row for the owner, who hands it to the waiting question and then blanks the row's
payload. An answer's content is never logged: a form may ask for a secret.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, cast, get_args

import anyio
import mcp_types as mcp

from toolbridge.agent import ElicitationRequest, NobodyToAsk, SamplingRequest
from toolbridge.mcp.calls_in_flight import CallInFlight
from toolbridge.mcp.elicitation_form import ElicitationForm, FormError, FormField
from toolbridge.runs.ledger import RunSignal
from toolbridge.server._errors import ApiError
from toolbridge.server.web.chats import RUNNING_CHAT, ChatHub
from toolbridge.store import StoreError

__all__ = ["OpeningQuestions", "WebAsker", "asking_for_opening"]

logger = logging.getLogger(__name__)

Action = Literal["accept", "decline", "cancel"]


@dataclass
class _Question:
    chat_id: int
    form: ElicitationForm | None
    answered: anyio.Event = field(default_factory=anyio.Event)
    action: Action = "cancel"
    content: dict[str, Any] | None = None
    signal_id: int | None = None
    """The signal row that brought the answer from another replica."""

    def settle(self, action: Action, content: dict[str, Any] | None) -> None:
        """Answer it; a form's content that does not fit is refused (422) and it stays open."""
        self.content = _checked(self.form, action, content)
        self.action = action
        self.answered.set()


@dataclass
class OpeningQuestions:
    """The servers' questions asked while one part of a chat's message opening is read."""

    chat_id: int
    refused: str | None = None
    """What the person (or the time limit) did not accept, e.g. "you declined server 'docs' question
    'Who is this for?'"; None while every question was answered."""


_OPENING: ContextVar[OpeningQuestions | None] = ContextVar("toolbridge_opening_questions", default=None)


@contextmanager
def asking_for_opening(chat_id: int) -> Iterator[OpeningQuestions]:
    """Inside: a server's question asked outside any call (a prompt or a read answering
    `input_required`) is shown on chat `chat_id`'s page; read `refused` afterwards."""
    questions = OpeningQuestions(chat_id)
    token = _OPENING.set(questions)
    try:
        yield questions
    finally:
        _OPENING.reset(token)


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
        action, _ = await self._ask(request.server, request.call, None, {**details, "preview": preview})
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
        action, content = await self._ask(request.server, request.call, request.form, details)
        return mcp.ElicitResult(action=action, content=content)

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        # To the card that showed the URL, even if its call has ended meanwhile.
        asked = self._url_asked_in.pop((server, elicitation_id), None)
        if self.hub is None or asked is None:
            return
        chat_id, call_id = asked
        event = {"type": "server_request_completed", "server": server, "elicitation_id": elicitation_id}
        self.hub.live.publish(chat_id, json.dumps({**event, "call_id": call_id}))

    async def answer(
        self, chat_id: int, request_id: str, action: Action, content: dict[str, Any] | None
    ) -> None:
        """The page's answer; a form that does not fit its schema is refused (422) and stays open."""
        question = self._questions.get(request_id)
        if question is not None and question.chat_id == chat_id and not question.answered.is_set():
            question.settle(action, content)
            return
        missing = ApiError(404, f"no server request {request_id!r} is waiting in chat {chat_id}")
        run_id = await self.hub.run_elsewhere(chat_id) if self.hub is not None else None
        if run_id is None or self.hub is None:
            raise missing
        ledger = self.hub.ledger
        asked = await anyio.to_thread.run_sync(ledger.waiting_server_request, run_id, request_id)
        if asked is None:
            raise missing
        form = _form_of(asked["fields"]) if asked.get("kind") == "form" else None
        answer = json.dumps({"action": action, "content": _checked(form, action, content)})
        if not await anyio.to_thread.run_sync(
            lambda: ledger.signal(run_id, "answer", request_id, payload=answer)
        ):
            raise missing

    def _take_answer(self, question: _Question, signal: RunSignal) -> None:
        """Another replica's answer (checked there already; checked again: it may run another version)."""
        if question.answered.is_set():
            return
        try:
            answer = json.loads(signal.payload or "")
            action = answer["action"]
            if action not in get_args(Action):
                raise ValueError(f"unknown action {action!r}")
            question.settle(cast(Action, action), answer.get("content"))
        except (ValueError, KeyError, TypeError, ApiError):
            # Not the content: it may hold a secret.
            logger.warning(
                "ignoring a malformed answer to server request %s from another replica", signal.call_id
            )
            return
        question.signal_id = signal.id

    async def _ask(
        self, server: str, call: CallInFlight | None, form: ElicitationForm | None, details: dict[str, Any]
    ) -> tuple[Action, dict[str, Any] | None]:
        chat_id, call_id, opening = await self._where_to_ask(call)
        assert self.hub is not None
        request_id = uuid.uuid4().hex
        question = self._questions[request_id] = _Question(chat_id=chat_id, form=form)
        # An opening's question is marked: the page shows it on its own, with no call card to go in.
        where: dict[str, Any] = {"call_id": call_id, **({"opening": True} if opening is not None else {})}
        event = {"type": "server_request", "request_id": request_id, **where, "server": server, **details}
        timed_out = False
        try:
            with self.hub.live.expecting_answer(chat_id, request_id, partial(self._take_answer, question)):
                self.hub.live.publish(chat_id, json.dumps(event))
                with anyio.move_on_after(self._timeout) as waiting:
                    await question.answered.wait()
                timed_out = waiting.cancelled_caught
        finally:
            del self._questions[request_id]
            answered = {"type": "server_request_answered", "request_id": request_id, **where}
            self.hub.live.publish(chat_id, json.dumps({**answered, "action": question.action}))
            if opening is not None and question.action != "accept" and opening.refused is None:
                # Also when the read is cut off (the server's own timeout) while the question waits.
                opening.refused = _refusal(server, details, question, self._timeout, timed_out)
            if question.signal_id is not None:
                with anyio.CancelScope(shield=True):
                    await self._forget_payload(question.signal_id)
        if details.get("elicitation_id") and question.action == "accept" and call_id is not None:
            self._url_asked_in[(server, details["elicitation_id"])] = (chat_id, call_id)
        return question.action, question.content

    async def _where_to_ask(
        self, call: CallInFlight | None
    ) -> tuple[int, str | None, OpeningQuestions | None]:
        """The chat to ask in, the call whose card shows the question (None: a message's opening, no
        call), and that opening's questions."""
        opening = _OPENING.get() if call is None else None
        if opening is not None and self.hub is not None:
            return opening.chat_id, None, opening
        chat_id = call.context.get(RUNNING_CHAT) if call is not None else None
        if call is None or chat_id is None or self.hub is None:
            raise NobodyToAsk(f"toolbridge serve has nobody to ask ({_why_nobody(call)})")
        shown = False
        with anyio.move_on_after(self._timeout):
            shown = await self.hub.live.call_shown(chat_id, call.call_id)
        if not shown:
            raise NobodyToAsk(
                f"toolbridge serve has nobody to ask (the chat's call {call.call_id!r} has ended)"
            )
        return chat_id, call.call_id, None

    async def _forget_payload(self, signal_id: int) -> None:
        assert self.hub is not None
        try:
            await anyio.to_thread.run_sync(self.hub.ledger.forget_payload, signal_id)
        except StoreError as error:
            logger.warning("cannot blank the answer in run signal %d: %s", signal_id, error)


def _checked(
    form: ElicitationForm | None, action: Action, content: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The content to send for `action`: a form's answer completed with its defaults (422 when it does
    not fit the form), nothing unless accepted."""
    if action != "accept":
        return None
    if form is None:
        return content
    try:
        return dict(form.complete(content or {}))
    except FormError as exc:
        raise ApiError(422, str(exc), param="content") from None


def _form_of(fields: list[dict[str, Any]]) -> ElicitationForm:
    """The form a `server_request` event's `fields` (see `_field`) describe, on a replica that did not ask."""
    return ElicitationForm(
        tuple(
            FormField(
                name=f["name"],
                kind=f["kind"],
                title=f["title"],
                description=f["description"],
                required=f["required"],
                default=f["default"],
                choices=tuple((c["value"], c["label"]) for c in f["choices"]),
                constraints=f.get("constraints") or {},  # none from an owner before they were sent
            )
            for f in fields
        )
    )


def _refusal(
    server: str, details: dict[str, Any], question: _Question, timeout: float, timed_out: bool
) -> str:
    """What became of a question of a message's opening that was not accepted: declined, cancelled,
    unanswered within `timeout` (`timed_out`), or still waiting when the read was cut off."""
    asked = (
        f"server {server!r}'s sampling request"
        if details.get("kind") == "sampling"
        else f"server {server!r}'s question {details.get('message', '')!r}"
    )
    if timed_out:
        return f"nobody answered {asked} within {timeout:g} s (server.approval_timeout)"
    if not question.answered.is_set():
        return f"nobody answered {asked} in time"
    done = "declined" if question.action == "decline" else "cancelled"
    return f"you {done} {asked}"


def _why_nobody(call: CallInFlight | None) -> str:
    if call is None:
        return "it asked outside a tool call, or during one of several calls to it that cannot be told apart"
    return "the call came through the OpenAI endpoint, which answers programs"


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
        "constraints": dict(form_field.constraints),
    }
