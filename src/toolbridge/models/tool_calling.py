"""How tools reach a model: natively, in the prompt, or natively until the endpoint refuses (`auto`).

Each way is a wrapper around any `Model`, taking the same `ModelRequest` (tools included) and yielding
the same native-style events, so the agent loop never knows which one it has:

- `NativeToolsModel`: tools through the API; markup a server leaked into the text is still read as
  calls (Qwen and Hermes models behind vLLM or Ollama).
- `PromptToolsModel(inner, dialect=None)`: the catalog and calling convention in the system prompt,
  earlier calls and results rewritten into the dialect's text, calls parsed from the streamed text, and
  the stream closed at a complete call.
- `AutoToolsModel`: native; when the endpoint answers `ToolsNotSupportedError`, prompt mode from then
  on, announced with a `ToolModeChanged` event. The switch is the wrapper's own, made for one run: the
  wrapped model is shared by every chat that uses it and never changes. Later runs learn of it from the
  memory kept per endpoint and model (`toolbridge.models.tool_modes`), read before their first request.

`tool_calling_model(model, mode)` picks one from the mode (the model's own when None).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

from toolbridge.errors import ToolsNotSupportedError
from toolbridge.models._prompt_transcript import PromptTranscript
from toolbridge.models._text_calls import TextReading, calls_from_text
from toolbridge.models.base import (
    Model,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    NamedTool,
    ToolModeChanged,
    event_stream,
)
from toolbridge.models.model_profiles import model_profile
from toolbridge.models.tool_modes import endpoint_of, remember_prompt_mode, remembered_tool_mode
from toolbridge.parsing import CallFormat, call_format, reading_format
from toolbridge.prompting import build_system_prompt
from toolbridge.types import Message, SystemMessage, ToolMode, ToolModeSetting, ToolSpec

__all__ = [
    "AutoToolsModel",
    "NativeToolsModel",
    "PromptToolsModel",
    "ToolCallingModel",
    "tool_calling_model",
    "tool_choice_instruction",
]


class ToolCallingModel(Model):
    """A model wrapper that takes tools in the request, however the model behind it takes them.

    Subclasses say what the inner model is sent (`_inner_request`); the reply's text always goes
    through the parser (which reads every dialect: models write what they were trained on), so calls
    written in text come out as `ToolCallDelta`s, and unreadable ones are explained in `dialect`. A
    request without tools goes through untouched: without tools, markup in the text is just text.

    `dialect` (the one prompt mode asks for) and whether the text starts inside reasoning come from the
    inner model's config (`"dialect"`, `"reasoning_open"`), else from its model profile, else Hermes. The
    profile's reasoning hint goes with its dialect: a config naming another dialect does not get it.
    """

    def __init__(self, inner: Model, *, dialect: str | CallFormat | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        profile = model_profile(inner.model_id or inner.name)
        chosen = dialect or inner.dialect or profile.dialect
        self.call_format: CallFormat = call_format(chosen) if isinstance(chosen, str) else chosen
        """The dialect in which prompt mode asks for calls, and in which unreadable ones are explained."""
        self.dialect = self.call_format.name
        # A profile found by the name describes a model writing its own dialect: when the config names
        # another, the profile is not this model's, and neither is its reasoning hint.
        hint = profile.reasoning_open and self.dialect == profile.dialect
        self.reasoning_open = hint if inner.reasoning_open is None else inner.reasoning_open
        self._tools: Sequence[ToolSpec] = ()
        self._tool_section = ""
        self._system: tuple[tuple[str, str], SystemMessage] | None = None
        """The latest system message with the tool section, by the text it was made from."""

    @property
    def active_tool_mode(self) -> ToolMode:
        """How tools go to the model right now."""
        return "prompt" if self.tool_mode == "prompt" else "native"

    async def prepare(self) -> None:
        """Settle the mode before a run's first request (`auto` reads what was remembered)."""

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        return event_stream(self._events(request))

    async def _events(self, request: ModelRequest) -> AsyncGenerator[ModelEvent]:
        if not request.tools:
            async with self.inner.stream(self._request_without_tools(request)) as events:
                async for event in events:
                    yield event
            return
        async with self.inner.stream(self._inner_request(request)) as events:
            async for event in calls_from_text(events, self._reading(request)):
                yield event

    @abstractmethod
    def _inner_request(self, request: ModelRequest) -> ModelRequest: ...

    def _request_without_tools(self, request: ModelRequest) -> ModelRequest:
        """What the inner model is sent when no tools are offered (earlier calls may still be in it)."""
        return request

    def _reading(self, request: ModelRequest) -> TextReading:
        return TextReading(
            dialect=self.call_format,
            format=reading_format(self.call_format.name),
            reasoning_open=bool(self.reasoning_open),
            schemas={tool.name: tool.input_schema for tool in request.tools},
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _with_tool_section(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, then: str = ""
    ) -> list[Message]:
        """The messages with the tool section of the system prompt (and `then` after it) added to the
        system message."""
        if tools is not self._tools:  # rendering a catalog is not free: once per tool list
            self._tools = tools
            self._tool_section = self._render_tool_section(tools)
        given = messages[0].content if messages and isinstance(messages[0], SystemMessage) else ""
        rest = messages[1:] if given else messages
        section = f"{self._tool_section}\n\n{then}" if then else self._tool_section
        # The same system message object every step, so its wire form is computed once.
        made_from = (given, section)
        if self._system is None or self._system[0] != made_from:
            content = f"{given}\n\n{section}" if given else section
            self._system = (made_from, SystemMessage(content=content))
        return [self._system[1], *rest]

    def _render_tool_section(self, tools: Sequence[ToolSpec]) -> str:
        raise NotImplementedError(f"{type(self).__name__} adds no tool section of its own")


class NativeToolsModel(ToolCallingModel):
    """Tools through the API's function calling; leaked call markup in the text is read as calls."""

    tool_mode: ToolModeSetting = "native"

    def __repr__(self) -> str:
        return f"NativeToolsModel({self.inner!r})"

    def _inner_request(self, request: ModelRequest) -> ModelRequest:
        messages = self._with_tool_section(request.messages, request.tools)
        return ModelRequest(messages=messages, tools=request.tools, settings=request.settings)

    def _render_tool_section(self, tools: Sequence[ToolSpec]) -> str:
        return build_system_prompt(None, tools, tool_mode="native")


class PromptToolsModel(ToolCallingModel):
    """Tools described in the system prompt, calls written and read in `dialect` (a call format of
    `toolbridge.parsing`; by default the model's own, see `ToolCallingModel`). The model behind it never
    sees native tools."""

    tool_mode: ToolModeSetting = "prompt"

    def __init__(self, inner: Model, *, dialect: str | CallFormat | None = None) -> None:
        super().__init__(inner, dialect=dialect)
        self._transcript = PromptTranscript(self.call_format)

    def __repr__(self) -> str:
        return f"PromptToolsModel({self.inner!r}, dialect={self.dialect!r})"

    def _inner_request(self, request: ModelRequest) -> ModelRequest:
        # Nothing but the prompt can make a model without function calling call a tool.
        demand = tool_choice_instruction(request.settings)
        messages = self._with_tool_section(self.transcript(request.messages), request.tools, then=demand)
        return ModelRequest(messages=messages, tools=(), settings=request.settings)

    def _render_tool_section(self, tools: Sequence[ToolSpec]) -> str:
        return build_system_prompt(None, tools, tool_mode="prompt", dialect=self.call_format)

    def _request_without_tools(self, request: ModelRequest) -> ModelRequest:
        # Earlier calls and results in the conversation (a client's `tool_choice: none`) are still
        # text to this endpoint, which takes no tool messages.
        return ModelRequest(messages=self.transcript(request.messages), settings=request.settings)

    def transcript(self, messages: Sequence[Message]) -> list[Message]:
        """The transcript as an endpoint without function calling can take it: calls become the
        dialect's text in the assistant message, and the results after them `<tool_result>` blocks in
        one user message (with the user message that follows them, if any)."""
        return self._transcript.render(messages)


class AutoToolsModel(ToolCallingModel):
    """Native tools until the endpoint rejects them, then prompt mode for the rest of the run (and
    remembered for the endpoint). Make one per run: the mode it is in is its own."""

    tool_mode: ToolModeSetting = "auto"

    def __init__(self, inner: Model, *, dialect: str | CallFormat | None = None) -> None:
        super().__init__(inner, dialect=dialect)
        self.native = NativeToolsModel(inner, dialect=self.call_format)
        self.prompt = PromptToolsModel(inner, dialect=self.call_format)
        self._mode: ToolMode = "prompt" if inner.tool_mode == "prompt" else "native"

    def __repr__(self) -> str:
        return f"AutoToolsModel({self.inner!r}, now={self.active_tool_mode!r})"

    @property
    def active_tool_mode(self) -> ToolMode:
        """How tools go to the model right now, in this wrapper's run."""
        return self._mode

    def _inner_request(self, request: ModelRequest) -> ModelRequest:
        current = self.prompt if self.active_tool_mode == "prompt" else self.native
        return current._inner_request(request)

    async def prepare(self) -> None:
        endpoint = endpoint_of(self.inner)
        if self.inner.tool_mode != "auto" or endpoint is None:
            return
        if await remembered_tool_mode(*endpoint) == "prompt":
            self._mode = "prompt"

    async def _events(self, request: ModelRequest) -> AsyncGenerator[ModelEvent]:
        if self.active_tool_mode == "native":
            yielded = False
            try:
                async with self.native.stream(request) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except ToolsNotSupportedError as error:
                if yielded or not request.tools:
                    raise
                self._mode = "prompt"
                await remember_prompt_mode(self.inner, str(error))
                yield ToolModeChanged("prompt", str(error))
        async with self.prompt.stream(request) as events:
            async for event in events:
                yield event


def tool_choice_instruction(settings: ModelSettings) -> str:
    """What tells a model given its tools in the prompt that this reply must call one (or this one),
    and that it may call only one."""
    choice = settings.tool_choice
    lines = []
    if choice == "required":
        lines.append(
            "In this reply you must call at least one of the tools above; do not answer without a call."
        )
    elif isinstance(choice, NamedTool):
        lines.append(
            f"In this reply you must call the tool `{choice.name}`; do not answer without that call."
        )
    if settings.parallel_tool_calls is False:
        lines.append("Call at most one tool per reply.")
    return "\n".join(lines)


def tool_calling_model(
    model: Model, mode: ToolModeSetting | None = None, *, dialect: str | CallFormat | None = None
) -> ToolCallingModel:
    """`model` wrapped for `mode` (None: the model's own `tool_mode`), for one run. A wrapper is returned
    as it is, but for an `AutoToolsModel`, which is copied: the mode it settles on belongs to one run."""
    if isinstance(model, AutoToolsModel):
        return AutoToolsModel(model.inner, dialect=model.call_format)
    if isinstance(model, ToolCallingModel):
        return model
    mode = mode or model.tool_mode
    if mode == "native":
        return NativeToolsModel(model, dialect=dialect)
    if mode == "prompt":
        return PromptToolsModel(model, dialect=dialect)
    return AutoToolsModel(model, dialect=dialect)
