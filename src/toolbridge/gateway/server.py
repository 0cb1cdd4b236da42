"""`Gateway`: toolbridge as one MCP server in front of the servers of a config.

```python
async with Toolbox(config) as toolbox:
    await Gateway(toolbox).serve_stdio()
```
Built on the official SDK's low-level server: the gateway passes the upstream tools' schemas through
as they are, under the names `toolbridge tools` shows; resources, templates and prompts likewise (see
`_uris` for how URIs stay unique). When an upstream server says a list changed, every client is told.
For what upstream servers send their client (log messages, sampling, elicitation, roots) to reach the
gateway's clients, build the toolbox with the gateway's `ClientCalls`:

```python
calls = ClientCalls()
async with Toolbox(config, features=gateway_features(calls)) as toolbox:
    gate = ApprovalGate(agent.approval, config.gateway.approval)
    await Gateway(toolbox, calls=calls, approval=gate).serve_stdio()
```
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.message import SessionMessage

from toolbridge._version import __version__
from toolbridge.config.gateway import TokenReach
from toolbridge.gateway._approval import ApprovalGate
from toolbridge.gateway._calls import ClientCalls
from toolbridge.gateway._downstream import (
    Downstream,
    listen,
    note_client,
    subscribe_resource,
    unsubscribe_resource,
)
from toolbridge.gateway._paging import PAGE_SIZE
from toolbridge.gateway._prompts import GatewayPrompts
from toolbridge.gateway._reach import CallerReach
from toolbridge.gateway._resources import GatewayResources
from toolbridge.gateway._sessions import DownstreamSessions
from toolbridge.gateway._stdio import stdio_streams
from toolbridge.gateway._tasks import GatewayTasks
from toolbridge.gateway._tools import LEFT_OUT, GatewayTools, ToolOffer
from toolbridge.gateway._upstream import Upstream
from toolbridge.mcp._transports._streams import ReadStream, WriteStream
from toolbridge.tools import CallObserver, Toolbox
from toolbridge.types import ToolSpec

if TYPE_CHECKING:
    from toolbridge.store import CallLog

__all__ = ["Gateway"]

GATEWAY_NAME = "toolbridge"


def _offer_all(tool: ToolSpec) -> bool:
    return True


class Gateway:
    def __init__(
        self,
        toolbox: Toolbox,
        *,
        offers: ToolOffer = _offer_all,
        left_out: str = LEFT_OUT,
        servers: Sequence[str] | None = None,
        call_log: CallLog | None = None,
        timeout: float | None = None,
        page_size: int = PAGE_SIZE,
        token_rules: Mapping[str, TokenReach] | None = None,
        approval: ApprovalGate | None = None,
        calls: ClientCalls | None = None,
        max_result_chars: int | None = None,
    ) -> None:
        """`offers` picks the tools clients see and may call (`left_out` tells a client calling another
        why it may not); `servers` the servers whose resources and prompts they see (None: every
        enabled one); `call_log` is installed on the toolbox's observers (the gateway's calls are
        logged with the caller "gateway"), written in batches while the gateway runs (`running()`);
        `timeout` caps each call (None: the server's own timeout); `page_size` is how many resources,
        templates or prompts one listing page holds; `token_rules` narrows what the clients of each
        named HTTP token reach: tools, and the servers whose resources and prompts they see (see
        `_reach` and `gateway.http`); `approval` holds back the calls the policy says need the user's
        approval (None: every call runs); `calls` follows the clients' calls, and the toolbox was built
        with its `gateway_features`; `max_result_chars` caps each tool result (None: the config's
        `gateway.max_result_chars`). Every call goes through the toolbox's call pipeline, so its
        observers (spans and metrics by default) see the gateway's calls too."""
        self.toolbox = toolbox
        self.sessions = DownstreamSessions(toolbox)
        self.calls = calls or ClientCalls()
        reach = CallerReach(toolbox, offers, token_rules)
        # Told of each call as it starts: it follows which upstream server the client's call is on.
        _install(toolbox, self.calls)
        self._call_log = call_log
        if call_log is not None:
            _install(toolbox, call_log)
        self.tools = GatewayTools(
            toolbox,
            self.sessions,
            offers=offers,
            left_out=left_out,
            timeout=timeout,
            reach=reach,
            approval=approval,
            calls=self.calls,
            max_result_chars=max_result_chars or toolbox.config.gateway.max_result_chars,
        )
        upstream = Upstream(toolbox, servers, reach, self.calls)
        self._upstream = upstream
        self.resources = GatewayResources(upstream, page_size=page_size)
        self.prompts = GatewayPrompts(upstream, self.resources, page_size=page_size)
        self.server: Server[Any] = Server[Any](
            GATEWAY_NAME,
            version=__version__,
            instructions="Tools of several MCP servers, held by toolbridge.",
            lifespan=self._serving,
            on_list_tools=self.tools.list_tools,
            on_call_tool=self.tools.call_tool,
            on_list_resources=self.resources.list_resources,
            on_list_resource_templates=self.resources.list_resource_templates,
            on_read_resource=self.resources.read_resource,
            on_subscribe_resource=subscribe_resource,
            on_unsubscribe_resource=unsubscribe_resource,
            on_subscriptions_listen=listen,
            on_list_prompts=self.prompts.list_prompts,
            on_get_prompt=self.prompts.get_prompt,
            on_completion=self.prompts.complete,
            get_tool_input_schema=self.tools.input_schema,
        )
        self.server.middleware.append(note_client)
        # Tasks (io.modelcontextprotocol/tasks) for the clients that declare the extension: `_tasks`.
        cap = max_result_chars or toolbox.config.gateway.max_result_chars
        self.tasks = GatewayTasks(self.calls.parking, max_result_chars=cap)
        self.tasks.install(self.server, self.tools.call_tool)
        # Declares logging: a 2025-revision client says which upstream log levels it wants to hear.
        self.server.add_request_handler("logging/setLevel", mcp.SetLevelRequestParams, self.calls.set_level)
        self.server.add_notification_handler(
            "notifications/roots/list_changed", mcp.NotificationParams, self._roots_changed
        )

    async def _roots_changed(self, ctx: ServerRequestContext[Any], params: mcp.NotificationParams) -> None:
        # A client's roots are what the servers behind the gateway list: tell them.
        await self.toolbox.pool.notify_roots_changed()

    def initialization_options(self) -> InitializationOptions:
        changes = NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
        return self.server.create_initialization_options(changes)

    @asynccontextmanager
    async def running(self, *, one_client: bool = False) -> AsyncIterator[None]:
        """What serving needs beside the toolbox: the tasks holding the clients' own upstream sessions
        and the one writing the call log in batches (what is queued is written on leaving). `one_client`: only
        one client will connect (stdio), so every upstream session is its own."""
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self.sessions.running(one_client=one_client))
            if self._call_log is not None:
                await stack.enter_async_context(self._call_log.running())
            yield

    @asynccontextmanager
    async def _serving(self, server: Server[Any]) -> AsyncIterator[Downstream]:
        """The server's lifespan: the clients of this run, told of every upstream list change meanwhile."""
        downstream = Downstream(self._upstream, self.resources)
        stop_watching = self.toolbox.watch_lists(downstream.list_changed)
        try:
            # Calls waiting for a client's next round (2026-07-28) run in the parking lot while it serves.
            async with self.calls.parking.open(), anyio.create_task_group() as relaying:
                relaying.start_soon(downstream.relay_changes)
                try:
                    yield downstream
                finally:
                    relaying.cancel_scope.cancel()
        finally:
            stop_watching()
            with anyio.CancelScope(shield=True):
                await downstream.aclose()

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until it closes them."""
        async with stdio_streams() as (read, write):
            await self.serve_one_client(read, write)

    async def serve_one_client(
        self, read: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage]
    ) -> None:
        """Serve one client over a pair of message streams until it closes them (stdio, or in memory)."""
        async with self.running(one_client=True):
            await self.server.run(read, write, self.initialization_options())


def _install(toolbox: Toolbox, observer: CallObserver) -> None:
    if not any(installed is observer for installed in toolbox.observers):
        toolbox.observers.append(observer)
