"""The Python API: `Agent.run()`, `Agent.stream()` and `Agent.run_sync()`.

```python
async with Agent.from_config(load_config(), name="excel-helper") as agent:
    result = await agent.run("What is in myfile.xlsx?")
    print(result.output, result.stop_reason, result.usage)

    async with agent.stream("And what time is it?", history=result.messages) as events:
        async for event in events:
            if event.type == "text_delta":
                print(event.text, end="")
```
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolbridge._exception_groups import unwrapped
from toolbridge.agent._reply import Emit
from toolbridge.agent.approval import Approver
from toolbridge.agent.asking import UserAsker
from toolbridge.agent.definition import AgentDefinition, load_agent_definition
from toolbridge.agent.events import AgentEvent, FinalEvent
from toolbridge.agent.loop import AgentRun
from toolbridge.agent.result import RunResult
from toolbridge.agent.server_requests import ServerRequests
from toolbridge.config.model import Config
from toolbridge.errors import UsageError
from toolbridge.mcp.client_features import NO_FEATURES, ClientFeatures
from toolbridge.models import Model, ModelSettings, resolve_model_async
from toolbridge.tools import CallContext, FunctionTool, Toolbox, ToolPipeline, ToolRegistry, native_tools
from toolbridge.tools.observers import TracedCalls
from toolbridge.types import ContentPart, Message, ToolSpec

__all__ = ["Agent", "AgentStream"]

_EVENT_BUFFER = 256
"""Events the loop may run ahead of a slow reader; past that it waits (it never drops events)."""


class Agent:
    """A model, the tools it may use, and the definition that shapes it. Safe to run many times.

    `model` None means the definition's model (or the default one), chosen when the agent opens: with
    `async with agent` or `run_sync()`. Such a model belongs to the agent and is closed with it.
    `tools` is a `Toolbox` (MCP servers and native tools; enter it, or the agent, before running), a
    `ToolPipeline` (a registry with the observers its calls are told to: a call log, say), a bare
    `ToolRegistry` (its calls traced), or None for the native tools only. `approve` is asked before
    calls the definition's approval policy marks; with none, such calls are refused and the model is
    told why. `cache_scope` names the conversation this agent's runs belong to, so the result cache
    keeps its entries apart from other conversations on the same tools (the server passes the chat);
    `chat_id` and `user_id` say whose calls they are in the call log.
    """

    def __init__(
        self,
        model: Model | None,
        tools: Toolbox | ToolPipeline | ToolRegistry | None = None,
        definition: AgentDefinition | None = None,
        *,
        approve: Approver | None = None,
        settings: ModelSettings | None = None,
        cache_scope: str | None = None,
        chat_id: int | None = None,
        user_id: int | None = None,
    ) -> None:
        self._model = model
        self._model_name: str | None = None
        self._model_config: Config | None = None
        self._owns_model = False
        """The agent chose its model when it opened: it closes it (its HTTP clients) as it closes."""
        self.cache_scope = cache_scope
        self.chat_id = chat_id
        """The stored chat this agent's runs belong to, for the call log (None: none)."""
        self.user_id = user_id
        """The user this agent's runs are for, for the call log (None: nobody signed in)."""
        self.definition = definition or AgentDefinition()
        self.approve = approve
        self.settings = settings
        self._toolbox = tools if isinstance(tools, Toolbox) else None
        if isinstance(tools, Toolbox):
            self.calls = tools.calls
        elif isinstance(tools, ToolPipeline):
            self.calls = tools
        else:
            registry = tools if tools is not None else ToolRegistry(native=native_tools())
            self.calls = ToolPipeline(registry, [TracedCalls()])
        """The path the agent's tool calls take, and the observers told about them."""
        self.registry = self.calls.registry
        self._stack: AsyncExitStack | None = None
        self.server_requests: ServerRequests | None = None
        """What answers the servers' sampling, elicitation and roots requests (`from_config` makes it)."""

    @property
    def toolbox(self) -> Toolbox | None:
        """The toolbox the agent was given (its MCP servers; their resources and prompts are
        `toolbox.content`), if it was given one."""
        return self._toolbox

    @property
    def model(self) -> Model:
        if self._model is None:
            raise UsageError(
                "the agent's model is chosen when the agent opens: use `async with agent:` or "
                "`agent.run_sync(...)`, or pass a Model"
            )
        return self._model

    @model.setter
    def model(self, model: Model) -> None:
        self._model = model

    @classmethod
    def from_config(
        cls,
        config: Config,
        *,
        name: str | None = None,
        definition: AgentDefinition | None = None,
        model: Model | str | None = None,
        tools: Sequence[FunctionTool] = (),
        approve: Approver | None = None,
        features: ClientFeatures = NO_FEATURES,
        asker: UserAsker | None = None,
        roots: Sequence[str] | None = None,
    ) -> Agent:
        """The agent `name` of `config` (None: the default agent), over a toolbox of the config's servers.

        Use it in `async with` (servers stay connected for the block), or call `run_sync()` directly:
        `Agent.from_config(load_config(), model="demo").run_sync("What is 15 + 27?")`.
        `definition` is used instead of looking `name` up (e.g. an agent kept in the store).
        `model` overrides the definition's model: a `Model`, or a name the models layer resolves.
        Extra Python `tools` are offered next to the config's servers and the native tools.
        `features` is what the servers get from their client (see `toolbridge.mcp.client_features`);
        what it leaves None is filled in here: servers' sampling requests are answered by the agent's
        model (or the one their config names) and, with elicitations, put to `asker` (none: declined
        unless a server's sampling needs no approval). `roots` (paths or file:// URIs; None: the
        definition's) are the folders servers see.
        """
        definition = definition or load_agent_definition(config, name)
        requests = ServerRequests(
            config, asker=asker, roots=roots if roots is not None else definition.roots or ()
        )
        toolbox = Toolbox(config, tools=tools, features=features.filled_from(requests.features()))
        agent = cls(None, toolbox, definition, approve=approve)
        agent.server_requests = requests
        requests.model = lambda: agent._model
        if isinstance(model, Model):
            agent.model = model
        else:
            agent._model_config = config
            agent._model_name = model or definition.model
        return agent

    # -- running --------------------------------------------------------------------------------

    async def run(
        self,
        prompt: str | None,
        *,
        history: Sequence[Message] = (),
        attachments: Sequence[ContentPart] = (),
        external_tools: Sequence[ToolSpec] = (),
    ) -> RunResult:
        """Run the loop until the model answers (or a stop condition) and return the result.

        `external_tools` are offered to the model next to the agent's own, but the caller runs them: a
        reply that calls one runs the agent's own calls of that step, then ends the run with
        `stop_reason="external_calls"` and the calls in `result.pending_calls`. Append a `ToolMessage`
        per pending call to `result.messages` and pass them as `history` with `prompt` None (and the
        same `external_tools`) to resume:

        ```python
        result = await agent.run("Book it", external_tools=[book])
        while result.stop_reason == "external_calls":
            results = [ToolMessage(name=c.name, result=my_run(c)) for c in result.pending_calls]
            result = await agent.run(None, history=[*result.messages, *results], external_tools=[book])
        ```

        `attachments` go with the prompt: resources read from a server (`ResourcePart`, e.g. from
        `toolbox.read_resource(...)`), images (`ImagePart`) or text. The model gets text inline, images
        as images where it takes them, and other content described by name, type and size.

        Cancelling the surrounding scope cancels the run, including tools still running; use
        `stream()` to keep the (cancelled) result in that case.
        """
        run = self._new_run(prompt, history, attachments=attachments, external_tools=external_tools)
        return await run.run()

    def stream(
        self,
        prompt: str | None,
        *,
        history: Sequence[Message] = (),
        attachments: Sequence[ContentPart] = (),
        external_tools: Sequence[ToolSpec] = (),
    ) -> AgentStream:
        """The run as typed events, ending with a `FinalEvent`. Use it as an async context manager:

        ```python
        async with agent.stream("15 + 27?") as events:
            async for event in events:
                ...
        print(events.result)
        ```
        Leaving the block early, or `events.cancel()`, cancels the run (its tools too). `prompt` None
        and `external_tools`: as for `run()`.
        """
        return AgentStream(
            lambda emit: self._new_run(
                prompt, history, emit, attachments=attachments, external_tools=external_tools
            )
        )

    def run_sync(
        self,
        prompt: str | None,
        *,
        history: Sequence[Message] = (),
        attachments: Sequence[ContentPart] = (),
        external_tools: Sequence[ToolSpec] = (),
    ) -> RunResult:
        """`run()` for scripts without an event loop. Opens the agent's toolbox for the call if needed."""

        async def run_once() -> RunResult:
            try:
                return await self.run(
                    prompt, history=history, attachments=attachments, external_tools=external_tools
                )
            finally:
                await self._close_model_if_any()  # HTTP clients belong to the loop that opened them

        async def run_on_a_loop_of_its_own() -> RunResult:
            if self._stack is not None:
                return await run_once()
            async with self:
                return await run_once()

        return anyio.run(run_on_a_loop_of_its_own)

    def _new_run(
        self,
        prompt: str | None,
        history: Sequence[Message],
        emit: Emit | None = None,
        *,
        attachments: Sequence[ContentPart] = (),
        external_tools: Sequence[ToolSpec] = (),
    ) -> AgentRun:
        context = CallContext(
            caller="agent", chat_id=self.chat_id, user_id=self.user_id, cache_scope=self.cache_scope
        )
        return AgentRun(
            self.model,
            self.calls,
            self.definition,
            prompt,
            history=history,
            attachments=attachments,
            approve=self.approve,
            emit=emit,
            settings=self.settings,
            context=context,
            external_tools=external_tools,
        )

    async def set_roots(self, folders: Sequence[str], *, server: str | None = None) -> None:
        """Replace the roots the servers see (`server`: only that one's) and tell the servers that
        are connected (`notifications/roots/list_changed`)."""
        if self.server_requests is None or self._toolbox is None:
            raise UsageError("roots belong to an agent made with Agent.from_config()")
        changed = self.server_requests.roots.set(folders, server=server)
        if changed is None:
            changed = [
                name for name in self._toolbox.pool.names if self.server_requests.roots.sees_shared(name)
            ]
        await self._toolbox.pool.notify_roots_changed(changed)

    # -- the toolbox's lifetime -----------------------------------------------------------------

    async def __aenter__(self) -> Self:
        """Open the toolbox passed in (connecting MCP servers on first use) until the block ends."""
        stack = AsyncExitStack()
        if self._model is None:
            # Off the event loop: finding the model may probe a local Ollama or read a file.
            self._model = await resolve_model_async(
                self._model_name or self.definition.model, self._model_config
            )
            self._owns_model = True
        if self._owns_model:
            stack.push_async_callback(self._close_model_if_any)
        if self.server_requests is not None:
            stack.push_async_callback(self.server_requests.aclose)
        if self._toolbox is not None:
            try:
                await stack.enter_async_context(self._toolbox)
            except BaseException:
                await stack.aclose()
                raise
        self._stack = stack
        return self

    async def _close_model_if_any(self) -> None:
        # The model in use now: it may have been switched since the agent opened.
        if self._model is not None:
            await self._model.aclose()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()


class AgentStream:
    """A run in progress, as events. The loop runs in a task of this context; leaving it ends the run."""

    def __init__(self, start_run: Callable[[Emit], AgentRun]) -> None:
        self._start_run = start_run
        self._run: AgentRun | None = None
        self._stack = AsyncExitStack()
        self._scope = anyio.CancelScope()
        self._receive: MemoryObjectReceiveStream[AgentEvent] | None = None
        self._entered = False

    @property
    def result(self) -> RunResult | None:
        """The run's result once it ended, however it ended (`stop_reason="cancelled"` if cancelled)."""
        return self._run.result if self._run is not None else None

    def cancel(self) -> None:
        """Stop the run (and its running tools) now; the final event follows with `cancelled`."""
        self._scope.cancel()

    async def __aenter__(self) -> Self:
        if self._entered:
            raise UsageError("an AgentStream can be entered once; call agent.stream() again")
        self._entered = True
        send, receive = anyio.create_memory_object_stream[AgentEvent](_EVENT_BUFFER)
        self._receive = receive
        self._run = self._start_run(send.send)
        await self._stack.enter_async_context(receive)
        group: TaskGroup = await self._stack.enter_async_context(anyio.create_task_group())
        # Cancel the loop before the group waits for it, whether the reader finished, broke off or failed.
        self._stack.callback(group.cancel_scope.cancel)
        group.start_soon(self._produce, self._run, send)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        with unwrapped():  # a failed run raises its error, not a group around it
            return await self._stack.__aexit__(exc_type, exc, tb)

    async def _produce(self, run: AgentRun, send: MemoryObjectSendStream[AgentEvent]) -> None:
        async with send:
            with self._scope:
                await run.run()
            # A cancelled run ends without announcing its last messages; they come before the end.
            for event in run.unpublished_messages():
                await send.send(event)
            result = run.result
            if result is not None:
                await send.send(FinalEvent(result=result))

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        if self._receive is None:
            raise UsageError(
                "use the stream as a context manager: `async with agent.stream(prompt) as events:`"
            )
        return self._receive.__aiter__()
