"""The agent loop, as a small explicit state machine.

Each step sends one request to the model, reads the reply, records it, and returns one tagged outcome:

    RunTools(reply)      the reply made calls: run them all concurrently, append one tool message per
                         call, and take another step
    AwaitExternal(reply, pending)
                         the reply also called external tools (offered, but run by the caller): run
                         the agent's own calls, then end the run with the external ones pending; given
                         their results in the history, a new run resumes from there (no prompt)
    FinalAnswer(reply)   the reply made no calls: it is the answer
    Stop(reason, detail) max_steps (the calls of the last allowed step do not run), repeated_call (the
                         same calls a third time in a row), model_error (after the provider's retries)

How tools reach the model (natively, in the prompt, or `auto`) is the business of the model wrapper
the run holds (`toolbridge.models.tool_calling`); the loop sees native-style events whatever the mode.
Cancellation (Ctrl-C, `AgentStream.cancel()`, a cancelled
scope) can come at any await; the run is then finished as `cancelled` with whatever completed, and the
cancellation goes on. Finishing always leaves a well-formed transcript: every call of the last assistant
message gets a tool message, saying it did not run if need be.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import anyio

from toolbridge.agent._external import ExternalTools
from toolbridge.agent._reply import Emit, Reply, read_reply
from toolbridge.agent._tools import ToolRunner
from toolbridge.agent.approval import Approver
from toolbridge.agent.definition import AgentDefinition
from toolbridge.agent.events import (
    AgentEvent,
    InvalidToolCallEvent,
    MessageAddedEvent,
    StepFinishedEvent,
    StepStartedEvent,
)
from toolbridge.agent.result import RunResult, StopReason, ToolCallRecord
from toolbridge.agent.transcript import interrupted_result, well_formed
from toolbridge.errors import ModelError, UsageError
from toolbridge.models import Model, ModelRequest, ModelSettings, ToolCallingModel, tool_calling_model
from toolbridge.prompting import Persona, build_system_prompt
from toolbridge.telemetry import RunTrace, trace_model_request, trace_run
from toolbridge.tools import CallContext, ToolPipeline
from toolbridge.tools.code_mode import CodeMode
from toolbridge.tools.function import FunctionTool
from toolbridge.tools.search import ToolSearch, search_wanted
from toolbridge.types import (
    NATIVE_SOURCE,
    AssistantMessage,
    ContentPart,
    Message,
    RunToolMode,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSearchSetting,
    ToolSpec,
    Usage,
    UserMessage,
)

__all__ = ["REPEAT_LIMIT", "AgentRun", "AwaitExternal", "FinalAnswer", "RunTools", "StepOutcome", "Stop"]

REPEAT_LIMIT = 3
"""A step asking for exactly the calls of the previous steps this many times in a row stops the run."""

AGENT_CALLS = CallContext(caller="agent")
"""The calls of a run that belongs to no chat or user."""


# -- the outcomes of a step -------------------------------------------------------------------------


@dataclass(frozen=True)
class RunTools:
    """The reply made calls: run them, then ask the model again."""

    reply: Reply


@dataclass(frozen=True)
class AwaitExternal:
    """The reply called external tools: run its own calls (`reply.calls`), then stop for `pending`."""

    reply: Reply
    pending: list[ToolCall]


@dataclass(frozen=True)
class FinalAnswer:
    reply: Reply


@dataclass(frozen=True)
class Stop:
    reason: StopReason
    detail: str
    error: ModelError | None = None


StepOutcome = RunTools | AwaitExternal | FinalAnswer | Stop

_OUTCOME_NAMES: dict[type, Literal["run_tools", "await_external", "final_answer", "stop"]] = {
    RunTools: "run_tools",
    AwaitExternal: "await_external",
    FinalAnswer: "final_answer",
    Stop: "stop",
}


# -- one run ----------------------------------------------------------------------------------------


class AgentRun:
    """One run of the loop: from a prompt to a `RunResult`. Not reusable; make one per run.

    `prompt` None continues `history` as it is: after a run that stopped for external calls, with
    their results appended. `external_tools` are offered to the model but run by the caller. The
    agent's own calls go through `tools` for `context` (the chat, user and cache scope they are for)."""

    def __init__(
        self,
        model: Model,
        tools: ToolPipeline,
        definition: AgentDefinition,
        prompt: str | None,
        *,
        history: Sequence[Message] = (),
        attachments: Sequence[ContentPart] = (),
        approve: Approver | None = None,
        emit: Emit | None = None,
        settings: ModelSettings | None = None,
        context: CallContext = AGENT_CALLS,
        external_tools: Sequence[ToolSpec] = (),
    ) -> None:
        self._model = model
        self._pipeline = tools
        self._definition = definition
        self._emit = emit
        self._settings = settings or ModelSettings()
        self._messages: list[Message] = well_formed(m for m in history if not isinstance(m, SystemMessage))
        if prompt is not None:
            self._messages.append(UserMessage(content=prompt, attachments=list(attachments)))
            self._new_message_index = len(self._messages) - 1
        else:
            _check_resumable(self._messages, attachments)
            self._new_message_index = len(self._messages)
        self._published = self._new_message_index
        """Messages before this index were announced with a `MessageAddedEvent` (or came as history)."""
        self._tools: list[ToolSpec] = []
        """What the model is offered this step."""
        self._own_tools: list[ToolSpec] = []
        self._external_specs = list(external_tools)
        self._external = ExternalTools((), set())
        self._context = context
        self._approve = approve
        self._runner = ToolRunner(tools, definition, context, approve=approve, emit=emit)
        self._search: ToolSearch | None = None
        self._code: CodeMode | None = None
        self._mode: RunToolMode = "none"
        self._tools_model: ToolCallingModel | None = None
        self._system_prompt = ""
        self._steps = 0
        self._usage = Usage()
        self._records: list[ToolCallRecord] = []
        # The calls of the latest assistant message whose results are not in the transcript yet.
        self._unanswered: list[ToolCall] = []
        self._finished_calls: dict[str, ToolCallRecord] = {}
        self._used_call_ids: set[str] = set()
        self._last_signature: tuple[str, ...] = ()
        self._repeats = 0
        self.result: RunResult | None = None
        """Set when the run ends, however it ends (also when cancelled)."""

    async def run(self) -> RunResult:
        with trace_run(self._definition.name, self._model.name) as traced:
            try:
                return await self._run()
            finally:
                self._report(traced)

    async def _run(self) -> RunResult:
        try:
            await self._prepare()
            await self._publish_messages()
            while True:
                outcome = await self._step()
                await self._publish_messages()
                if isinstance(outcome, RunTools):
                    await self._run_tools(outcome.reply)
                    await self._publish_messages()
                elif isinstance(outcome, AwaitExternal):
                    await self._run_tools(outcome.reply, tell_unreadable=False)
                    result = self._finish(outcome)
                    await self._publish_messages()
                    return result
                else:
                    result = self._finish(outcome)
                    await self._publish_messages()
                    return result
        except anyio.get_cancelled_exc_class():
            # No awaits here: the scope is cancelled. The stream sends the final event itself.
            self._finish(Stop("cancelled", "The run was cancelled."))
            raise
        except Exception:
            # A failure between the calls and their results must not leave calls unanswered in the
            # transcript the caller stores: announce a result for each before the error goes on.
            self._answer_calls(interrupted_result)
            await self._publish_messages()
            raise

    # -- states ---------------------------------------------------------------------------------

    async def _prepare(self) -> None:
        definition = self._definition
        if definition.tool_calling:
            listed = await self._pipeline.registry.list_tools(servers=self._servers())
            self._tools = definition.select_tools(listed)
        own = self._own_tools = self._tools
        self._external = ExternalTools(self._external_specs, {tool.name for tool in own})
        run_own: list[FunctionTool] = []
        if (definition.tool_mode or self._model.tool_mode) == "code" and own:
            # The model writes code calling the tools; each call still goes through the run's call path.
            self._code = CodeMode(own, self._call_from_code)
            run_own.append(self._code.tool)
        elif search_wanted(self._tool_search(), [*own, *self._external.specs]):
            # The catalog stays callable; the model is offered the search and what it finds.
            self._search = ToolSearch([*own, *self._external.specs], pinned=definition.pinned_tools)
            run_own.append(self._search.tool)
        if run_own:
            pipeline = self._pipeline.with_own_tools(run_own)
            self._runner = ToolRunner(
                pipeline, definition, self._context, approve=self._approve, emit=self._emit
            )
        self._tools = self._offered()
        if self._tools:
            # Code mode offers run_code as the model's own mode offers tools; in the prompt, as a
            # ```python block rather than code escaped inside the dialect's call.
            mode = definition.tool_mode if definition.tool_mode != "code" else None
            python_block = self._code is not None and (mode or self._model.tool_mode) == "prompt"
            dialect = "python_block" if python_block else None
            self._tools_model = tool_calling_model(self._model, mode, dialect=dialect)
            await self._tools_model.prepare()
            self._mode = self._tools_model.active_tool_mode
        self._system_prompt = build_system_prompt(self._persona(), ())

    def _tool_search(self) -> ToolSearchSetting:
        """The agent's setting, else the model's, else `auto`."""
        if self._definition.tool_search is not None:
            return self._definition.tool_search
        return self._model.tool_search if self._model.tool_search is not None else "auto"

    def _offered(self) -> list[ToolSpec]:
        if self._code is not None:
            return [self._code.tool.spec, *self._external.specs]
        if self._search is not None:
            return self._search.offered()
        return [*self._own_tools, *self._external.specs]

    async def _call_from_code(self, call: ToolCall) -> ToolResult:
        record = await self._runner.run_one(self._steps, call)
        self._records.append(record)
        return record.result

    def _servers(self) -> list[str] | None:
        if self._definition.servers is None:
            return None
        return [*self._definition.servers, NATIVE_SOURCE]

    async def _step(self) -> StepOutcome:
        self._steps += 1
        step = self._steps
        await self._send(StepStartedEvent(step=step, tool_mode=self._mode))
        try:
            with trace_model_request(self._model.name, agent=self._definition.name) as traced:
                reply = await read_reply(
                    self._tools_model or self._model, self._request(), step=step, emit=self._emit
                )
                traced.finish(
                    reply.finish_reason,
                    input_tokens=reply.usage.input_tokens,
                    output_tokens=reply.usage.output_tokens,
                )
        except ModelError as error:
            await self._send(StepFinishedEvent(step=step, outcome="stop"))
            return Stop("model_error", str(error), error)
        if self._tools_model is not None:
            self._mode = self._tools_model.active_tool_mode  # auto mode may have switched to prompt
        self._usage = self._usage + reply.usage
        outcome = self._decide(reply)
        await self._send(
            StepFinishedEvent(
                step=step,
                outcome=_OUTCOME_NAMES[type(outcome)],
                finish_reason=reply.finish_reason,
                closed_early=reply.closed_early,
                usage=reply.usage,
            )
        )
        return outcome

    def _decide(self, reply: Reply) -> StepOutcome:
        """Record the reply in the transcript and pick the outcome of the step."""
        reply = self._with_unique_ids(reply)
        calls = reply.calls
        content = "\n".join([reply.content, *(invalid.raw for invalid in reply.invalid_calls)]).strip()
        self._messages.append(AssistantMessage(content=content, reasoning=reply.reasoning, tool_calls=calls))
        if not reply.made_calls:
            return FinalAnswer(reply)
        own, external = self._external.split(calls)
        # An external call whose arguments could not be read is answered here, like an own one.
        own += [call for call in external if call.id in reply.failed_calls]
        external = [call for call in external if call.id not in reply.failed_calls]
        self._unanswered = calls
        self._finished_calls = {}
        if self._repeated(calls):
            described = ", ".join(f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})" for c in calls)
            return Stop(
                "repeated_call",
                f"The model asked for the same call {REPEAT_LIMIT} times in a row ({described}); "
                "stopped so it does not loop.",
            )
        if self._steps >= self._definition.max_steps:
            return Stop(
                "max_steps",
                f"The model was still calling tools after {self._steps} steps (max_steps); "
                "its last calls did not run.",
            )
        if external:
            # The external calls stay unanswered in the transcript: their results come from the caller.
            return AwaitExternal(replace(reply, calls=own), [self._external.for_caller(c) for c in external])
        return RunTools(reply)

    async def _run_tools(self, reply: Reply, *, tell_unreadable: bool = True) -> None:
        step = self._steps
        for invalid in reply.invalid_calls:
            await self._send(InvalidToolCallEvent(step=step, message=invalid.message, raw=invalid.raw))
        await self._runner.run_all(step, reply.calls, reply.failed_calls, self._finished_calls)
        if self._search is not None:
            self._tools = self._offered()  # with what the searches found
        did_not_run = "The call did not run."
        self._answer_calls(
            lambda call: ToolResult.error(call.id, did_not_run, kind="cancelled"), only=reply.calls
        )
        if reply.invalid_calls and tell_unreadable:
            # Calls the model wrote but that could not be read: it is told in its model's own words.
            # (Not while external results are due: a message between them would orphan those results.)
            feedback = "\n".join(invalid.feedback for invalid in reply.invalid_calls)
            self._messages.append(UserMessage(content=feedback))

    def _finish(self, outcome: FinalAnswer | AwaitExternal | Stop) -> RunResult:
        error = None
        pending: list[ToolCall] = []
        if isinstance(outcome, FinalAnswer):
            output, reason, detail = outcome.reply.content, "final_answer", ""
        elif isinstance(outcome, AwaitExternal):
            output, reason, pending = outcome.reply.content, "external_calls", outcome.pending
            names = ", ".join(sorted({call.name for call in pending}))
            detail = f"Waiting for the results of calls to external tools ({names})."
        else:
            output, reason, detail, error = "", outcome.reason, outcome.detail, outcome.error
            self._answer_calls(
                lambda call: ToolResult.error(call.id, f"This call did not run: {detail}", kind="cancelled")
            )
        result = RunResult(
            output=output,
            stop_reason=reason,
            stop_detail=detail,
            error=error,
            messages=list(self._messages),
            new_message_index=self._new_message_index,
            steps=self._steps,
            tool_calls=list(self._records),
            usage=self._usage,
            tool_mode=self._mode,
            pending_calls=pending,
        )
        self.result = result
        return result

    # -- helpers --------------------------------------------------------------------------------

    def _report(self, traced: RunTrace) -> None:
        if self.result is not None:
            traced.finish(
                self.result.stop_reason,
                steps=self.result.steps,
                input_tokens=self.result.usage.input_tokens,
                output_tokens=self.result.usage.output_tokens,
            )

    def _answer_calls(
        self, missing: Callable[[ToolCall], ToolResult], *, only: Sequence[ToolCall] | None = None
    ) -> None:
        """Append one tool message per unanswered call (of `only`, if given: the others stay
        unanswered), in call order; `missing` makes absent results."""
        answering = {call.id for call in only} if only is not None else None
        waiting: list[ToolCall] = []
        for call in self._unanswered:
            if answering is not None and call.id not in answering:
                waiting.append(call)
                continue
            record = self._finished_calls.pop(call.id, None)
            if record is None:
                record = ToolCallRecord(step=self._steps, call=call, result=missing(call), ran=False)
            self._records.append(record)
            self._messages.append(ToolMessage(name=call.name, result=record.result))
        self._unanswered = waiting

    def _request(self) -> ModelRequest:
        """The step's request; the model wrapper adds the tool section of the system prompt."""
        messages: list[Message] = []
        if self._system_prompt:
            messages.append(SystemMessage(content=self._system_prompt))
        messages += self._messages
        return ModelRequest(messages=messages, tools=self._tools, settings=self._settings)

    def _persona(self) -> Persona:
        definition = self._definition
        return Persona(
            name=definition.name if definition.name != "default" else "",
            description=definition.description,
            instructions=definition.instructions,
        )

    def _with_unique_ids(self, reply: Reply) -> Reply:
        # Prompt-mode models reuse ids like "call_001" across replies; results must stay matched.
        calls: list[ToolCall] = []
        failed: dict[str, ToolResult] = {}
        for call in reply.calls:
            known_failure = reply.failed_calls.get(call.id)
            if call.id in self._used_call_ids:
                call = call.model_copy(update={"id": ToolCall(name=call.name).id})
            self._used_call_ids.add(call.id)
            calls.append(call)
            if known_failure is not None:
                failed[call.id] = known_failure.model_copy(update={"call_id": call.id})
        return replace(reply, calls=calls, failed_calls=failed)

    def _repeated(self, calls: Sequence[ToolCall]) -> bool:
        signature = tuple(sorted(f"{c.name} {json.dumps(c.arguments, sort_keys=True)}" for c in calls))
        if signature and signature == self._last_signature:
            self._repeats += 1
        else:
            self._repeats = 1 if signature else 0
        self._last_signature = signature
        return self._repeats >= REPEAT_LIMIT

    def unpublished_messages(self) -> list[MessageAddedEvent]:
        """Events for the transcript's messages not announced yet (after a cancelled run, say)."""
        events = [
            MessageAddedEvent(step=self._steps, index=index, message=self._messages[index])
            for index in range(self._published, len(self._messages))
        ]
        self._published = len(self._messages)
        return events

    async def _publish_messages(self) -> None:
        for event in self.unpublished_messages():
            await self._send(event)

    async def _send(self, event: AgentEvent) -> None:
        if self._emit is not None:
            await self._emit(event)


def _check_resumable(messages: Sequence[Message], attachments: Sequence[ContentPart]) -> None:
    if attachments:
        raise UsageError("attachments go with a prompt; a run that resumes its history takes none")
    if not messages or isinstance(messages[-1], AssistantMessage):
        raise UsageError(
            "a run without a prompt resumes its history, which must end with tool results or a user "
            "message for the model to answer"
        )
