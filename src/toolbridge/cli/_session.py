"""A terminal conversation with an agent: turns run on an event loop in a background thread.

The main thread reads input and waits for each turn, so Ctrl-C arrives there as KeyboardInterrupt
and stops only the turn in progress (its stream and running tools are cancelled), not the session
or the MCP servers it keeps open between turns.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from toolbridge.agent import Agent, AgentStream, ApprovalRequest, RunResult, approve_all
from toolbridge.cli._asks import TerminalAsker
from toolbridge.cli._render import EventPrinter, JsonEventPrinter
from toolbridge.config import Config
from toolbridge.errors import ToolbridgeError, UsageError
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import OAuth
from toolbridge.models import resolve_model
from toolbridge.runs.recorder import RunRecorder
from toolbridge.store import CallLog, find_agent, resolve_agent_model
from toolbridge.tools import ContentCatalog
from toolbridge.types import NATIVE_SOURCE, ContentPart, Message, ToolSpec

if TYPE_CHECKING:
    from toolbridge.mcp.server_log import LogEntry
    from toolbridge.store import Store

__all__ = ["TerminalSession"]

T = TypeVar("T")


def _chat_features() -> ClientFeatures:
    """What servers get from a chat: a person to sign in (OAuth) when a server first asks."""
    from toolbridge.cli.auth import browser_sign_in

    return ClientFeatures(oauth=OAuth(sign_in=browser_sign_in()))


class TerminalSession:
    """Opens the agent once (servers connect on first use) and runs turns until closed."""

    def __init__(
        self,
        config: Config,
        printer: EventPrinter,
        *,
        agent: str | None = None,
        model: str | None = None,
        approve_everything: bool = False,
        store: Store | None = None,
        chat_id: int | None = None,
        instructions: str | None = None,
        model_settings: Mapping[str, Any] | None = None,
        keep_chat: bool = True,
    ) -> None:
        """`keep_chat` False: the turns are stored nowhere (`--no-log`, `history off`); a continued chat
        (`chat_id`) is still read, and tool calls still count in `toolbridge stats`."""
        self.printer = printer
        self.keep_chat = keep_chat
        self.store = store
        self.chat_id = chat_id
        """The stored chat the turns go to; one is created on the first turn when None."""
        self.history: list[Message] = store.get_history(chat_id) if store and chat_id is not None else []
        self._config = config
        self._agent_name = agent
        self._model_name = model
        self._model_stored = False
        """The chat's stored model is `_model_name` already."""
        self._approve_everything = approve_everything
        self._instructions = instructions
        self._model_settings = dict(model_settings or {})
        """`-o` options: they override the model's own settings for this session."""
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._agent_cm: AbstractContextManager[Agent] | None = None
        self._agent: Agent | None = None
        self._current: AgentStream | None = None
        self._waiting_opening: list[Message] = []

    def __enter__(self) -> TerminalSession:
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._agent_cm = self._portal.wrap_async_context_manager(self._open_agent())
            self._agent = self._agent_cm.__enter__()
        except BaseException as exc:
            self._portal_cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, *exc_info: Any) -> None:
        try:
            if self._agent_cm is not None:
                self._agent_cm.__exit__(*exc_info)
        finally:
            if self._portal_cm is not None:
                self._portal_cm.__exit__(*exc_info)

    @asynccontextmanager
    async def _open_agent(self) -> AsyncIterator[Agent]:
        approve = approve_all if self._approve_everything else self._ask
        found = find_agent(self._config, self.store, self._agent_name)
        model = self._model_name or resolve_agent_model(found, self._config)
        definition = found.definition
        if self._instructions is not None:
            definition = definition.model_copy(update={"instructions": self._instructions})
        asker = TerminalAsker(
            self.printer,
            approve_everything=self._approve_everything,
            json_output=isinstance(self.printer, JsonEventPrinter),
        )
        # Servers see the folder toolbridge runs in, unless the agent names its own.
        roots = definition.roots if definition.roots is not None else [os.getcwd()]
        async with Agent.from_config(
            self._config,
            definition=definition,
            model=model,
            approve=approve,
            asker=asker,
            roots=roots,
            features=_chat_features(),
        ) as agent:
            if self._model_settings:
                agent.model.settings = dataclasses.replace(agent.model.settings, **self._model_settings)
            if self.store is not None and agent.toolbox is not None:
                # Every call of the chat's runs, with the chat it belongs to (`toolbridge stats`).
                agent.toolbox.observers.append(CallLog(self.store.log_tool_calls))
            try:
                yield agent
            finally:
                await agent.model.aclose()  # resolved here, so closed here (also after a /model switch)

    def connect_servers(self) -> dict[str, str]:
        """Connect the agent's MCP servers now rather than on the first turn; the ones that failed, why.

        Ctrl-C while they connect raises KeyboardInterrupt at once (the connecting is cancelled).
        """
        assert self._portal is not None
        future = self._portal.start_task_soon(self._connect_servers)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    async def _connect_servers(self) -> dict[str, str]:
        if not self.agent.definition.tool_calling:
            return {}
        servers = self.agent.definition.servers
        await self.agent.registry.list_tools(servers=servers)
        errors = self.agent.registry.server_errors
        return {name: error for name, error in errors.items() if servers is None or name in servers}

    def tools(self) -> list[ToolSpec]:
        """The tools the agent offers its model."""
        assert self._portal is not None
        return self._portal.call(self._tools)

    async def _tools(self) -> list[ToolSpec]:
        definition = self.agent.definition
        servers = None if definition.servers is None else [*definition.servers, NATIVE_SOURCE]
        return definition.select_tools(await self.agent.registry.list_tools(servers=servers))

    def server_logs(self, server: str) -> list[LogEntry]:
        """The last messages `server` logged (connecting it if needed); raises ServerError if it cannot."""
        assert self._portal is not None
        toolbox = self.agent.toolbox
        if toolbox is None:
            raise UsageError("this chat's agent has no MCP servers")
        return self._portal.call(toolbox.server_logs, server)

    def switch_model(self, name: str) -> None:
        """Answer the next turns with the model `name` (as `--model` takes it); raises ConfigError if unknown."""
        assert self._portal is not None
        model = resolve_model(name, self._config)
        previous, self.agent.model = self.agent.model, model
        self._model_name, self._model_stored = name, False
        self._portal.call(previous.aclose)

    def set_roots(self, folders: list[str]) -> list[str]:
        """Replace the folders servers may work in (telling the connected ones); the new roots' URIs."""
        assert self._portal is not None
        self._portal.call(self.agent.set_roots, folders)
        return self.roots()

    def roots(self) -> list[str]:
        """The URIs of the roots servers without roots of their own see."""
        requests = self.agent.server_requests
        return [] if requests is None else [str(root.uri) for root in requests.roots("")]

    def clear(self) -> None:
        """Start over: the next turn opens a new stored chat with no history."""
        self.history = []
        self._waiting_opening = []
        self.chat_id, self._model_stored = None, False

    @property
    def agent(self) -> Agent:
        assert self._agent is not None, "use the session in a `with` block"
        return self._agent

    async def _ask(self, request: ApprovalRequest) -> bool:
        return await self.printer.ask_approval(request)

    def open_with(self, messages: Sequence[Message]) -> None:
        """Messages (a server prompt's, ending with the assistant's) that the next turn follows."""
        self._waiting_opening += messages

    @property
    def servers(self) -> list[str]:
        """The MCP servers this chat's agent may use (for resources and prompts too)."""
        toolbox = self.agent.toolbox
        if toolbox is None:
            return []
        return toolbox.content.only(self.agent.definition.servers).server_names

    def with_content(self, use: Callable[[ContentCatalog], Awaitable[T]]) -> T:
        """Run `use` on the servers' resources and prompts, from the main thread."""
        assert self._portal is not None
        toolbox = self.agent.toolbox
        if toolbox is None:
            raise ToolbridgeError("this chat has no MCP servers, so no resources or prompts")
        return self._portal.call(use, toolbox.content.only(self.agent.definition.servers))

    def turn(
        self, prompt: str, *, attachments: Sequence[ContentPart] = (), opening: Sequence[Message] = ()
    ) -> RunResult | None:
        """Run one turn to its end. Ctrl-C cancels it; the result then says `cancelled`.

        `opening`: messages that come before the prompt (a server prompt's), stored with the chat.
        """
        assert self._portal is not None
        opening, self._waiting_opening = [*self._waiting_opening, *opening], []
        future = self._portal.start_task_soon(self._run_turn, prompt, attachments, opening)
        try:
            return future.result()
        except KeyboardInterrupt:
            self._portal.call(self._cancel_turn)
            return future.result()
        finally:
            self.printer.close()

    async def _run_turn(
        self, prompt: str, attachments: Sequence[ContentPart] = (), opening: Sequence[Message] = ()
    ) -> RunResult | None:
        recorder = await self._recorder()
        self.agent.chat_id = self.chat_id  # the calls' chat in the call log: a new one after /clear
        if opening:
            self.history = [*self.history, *opening]
            if recorder is not None:
                recorder = await self._store_opening(opening)
        stream = self.agent.stream(prompt, history=self.history, attachments=attachments)
        async with stream as events:
            self._current = events
            try:
                async for event in events:
                    if recorder is not None:
                        await recorder.observe(event)  # each message is stored as it completes
                    self.printer.show(event)
            finally:
                self._current = None
        result = events.result
        if result is not None:
            self.history = list(result.messages)
        return result

    async def _recorder(self) -> RunRecorder | None:
        store = self.store
        if store is None or not self.keep_chat:
            return None
        # --model or /model: the chat goes on with it (`ask -c`, `chat --resume`).
        chosen = None if self._model_stored else self._model_name
        if self.chat_id is None:
            agent_name = self.agent.definition.name
            chat = await anyio.to_thread.run_sync(lambda: store.create_chat(agent=agent_name, model=chosen))
            self.chat_id = chat.id
        elif chosen is not None:
            chat_id = self.chat_id
            await anyio.to_thread.run_sync(lambda: store.set_chat_model(chat_id, chosen))
        self._model_stored = True
        return self._recorder_of(store, self.chat_id)

    def _recorder_of(self, store: Store, chat_id: int) -> RunRecorder:
        return RunRecorder(store, chat_id=chat_id, written=len(self.history), model=self.agent.model.name)

    async def _store_opening(self, opening: Sequence[Message]) -> RunRecorder:
        store, chat_id = self.store, self.chat_id
        assert store is not None
        assert chat_id is not None

        def append() -> None:
            for message in opening:
                store.append_message(chat_id, message)

        await anyio.to_thread.run_sync(append)
        return self._recorder_of(store, chat_id)

    async def _cancel_turn(self) -> None:
        if self._current is not None:
            self._current.cancel()
