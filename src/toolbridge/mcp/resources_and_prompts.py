"""A server's resources and prompts, as toolbridge's own typed values.

```python
async with ServerPool(config.servers) as pool:
    docs = pool.connection("docs").content
    for resource in await docs.list_resources():
        print(resource.uri, resource.mime_type)
    parts = await docs.read_resource("file:///notes.md")        # -> [ResourcePart(...)]
    prompt = await docs.get_prompt("review", {"file": "a.py"})  # -> PromptMessages (neutral messages)
```
Listings cover every page. On the 2025-11-25 revision they are kept for the session until the server says
they changed (`resources/list_changed`, `prompts/list_changed`); on 2026-07-28 a listing or a read is kept
as long as the server's cache hint (`ttlMs`) allows, and a listing no longer once the server says it
changed (the SDK `Client`'s response cache). A server that does not offer resources (or prompts, or
completions) lists none, without being asked.

A prompt or a resource read that the server answers with questions (`input_required`, 2026-07-28) is
answered like a tool call's: by the `ClientFeatures` handlers, then sent again with the answers.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as mcp
from mcp import Client
from mcp.client.caching import CacheMode
from mcp.shared.exceptions import MCPDeprecationWarning

from toolbridge.errors import ServerError
from toolbridge.mcp._listings import ListingKind
from toolbridge.mcp._resource_and_prompt_info import (
    PromptArgumentInfo,
    PromptInfo,
    PromptMessages,
    ResourceInfo,
    ResourceTemplateInfo,
)
from toolbridge.mcp._resources_and_prompts_from_mcp import (
    prompt_from_mcp,
    prompt_messages_from_mcp,
    resource_from_mcp,
    resource_part_from_mcp,
    template_from_mcp,
)
from toolbridge.mcp._revision import speaks_stateless_revision
from toolbridge.types import ResourcePart

if TYPE_CHECKING:
    from toolbridge.mcp._live_session import LiveSession
    from toolbridge.mcp.connection import ServerConnection

__all__ = [
    "PromptArgumentInfo",
    "PromptInfo",
    "PromptMessages",
    "ResourceInfo",
    "ResourceTemplateInfo",
    "ResourceUpdateHandler",
    "ServerContent",
]

logger = logging.getLogger(__name__)

ResourceUpdateHandler = Callable[[str, str], Awaitable[None]]
"""(server name, URI) -> None: a subscribed resource changed; read it again to see how."""


class ServerContent:
    """The resources and prompts of one `ServerConnection` (it is `connection.content`)."""

    def __init__(self, connection: ServerConnection) -> None:
        self._connection = connection
        self._subscribers: dict[str, list[ResourceUpdateHandler]] = {}

    @property
    def _server(self) -> str:
        return self._connection.name

    # -- resources ----------------------------------------------------------------------------------

    async def list_resources(self, *, refresh: bool = False) -> list[ResourceInfo]:
        """Every resource the server lists (all pages)."""
        listed = await self.list_resources_mcp(refresh=refresh)
        return [resource_from_mcp(item, server=self._server) for item in listed]

    async def list_resources_mcp(self, *, refresh: bool = False) -> list[mcp.Resource]:
        """`list_resources` as the server sent them, every field kept (icons, annotations, `_meta`)."""

        async def fetch(client: Client, cursor: str | None, mode: CacheMode) -> tuple[list[Any], str | None]:
            page = await client.list_resources(cursor=cursor, cache_mode=mode)
            return list(page.resources), page.next_cursor

        return await self._listing("resources", "listing its resources", fetch, refresh=refresh)

    async def list_resource_templates(self, *, refresh: bool = False) -> list[ResourceTemplateInfo]:
        """Every resource template the server lists (all pages)."""
        listed = await self.list_resource_templates_mcp(refresh=refresh)
        return [template_from_mcp(item, server=self._server) for item in listed]

    async def list_resource_templates_mcp(self, *, refresh: bool = False) -> list[mcp.ResourceTemplate]:
        """`list_resource_templates` as the server sent them."""

        async def fetch(client: Client, cursor: str | None, mode: CacheMode) -> tuple[list[Any], str | None]:
            page = await client.list_resource_templates(cursor=cursor, cache_mode=mode)
            return list(page.resource_templates), page.next_cursor

        return await self._listing("templates", "listing its resource templates", fetch, refresh=refresh)

    async def read_resource(self, uri: str) -> list[ResourcePart]:
        """The resource's contents: text, or base64 `blob` for binary ones (a resource may have several)."""
        result = await self.read_resource_mcp(uri)
        return [resource_part_from_mcp(contents) for contents in result.contents]

    async def read_resource_mcp(self, uri: str) -> mcp.ReadResourceResult:
        """`read_resource` as the server answered it, `_meta` included."""

        async def read(live: LiveSession) -> mcp.ReadResourceResult:
            # The client, not the bare session: it answers `input_required` and keeps cache hints.
            return await _client(live).read_resource(uri)

        return await self._connection.request(f"reading {uri!r}", read)

    async def subscribe(self, uri: str, on_update: ResourceUpdateHandler) -> None:
        """Have `on_update(server, uri)` called whenever the server says the resource changed.

        Raises `ServerError` when the server does not offer subscriptions.
        """

        async def subscribe(live: LiveSession) -> None:
            assert live.session is not None
            capabilities = live.session.server_capabilities
            resources = capabilities.resources if capabilities is not None else None
            if resources is None or not resources.subscribe:
                raise ServerError(
                    f"Server {self._server!r} does not offer resource subscriptions; read {uri!r} "
                    "again to see changes.",
                    server=self._server,
                )
            if live.resource_listens is not None:  # 2026-07-28: a subscriptions/listen stream
                await live.resource_listens.open(uri)
                return
            with warnings.catch_warnings():  # deprecated only for the 2026 revision, handled above
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await live.session.subscribe_resource(uri)

        self._subscribers.setdefault(uri, []).append(on_update)
        try:
            await self._connection.request(f"subscribing to {uri!r}", subscribe)
        except BaseException:
            self._drop(uri, on_update)
            raise

    async def unsubscribe(self, uri: str, on_update: ResourceUpdateHandler | None = None) -> None:
        """Stop calling `on_update` (None: every handler) for `uri`; the last one unsubscribes at the server."""
        self._drop(uri, on_update)
        if uri in self._subscribers:
            return

        async def unsubscribe(live: LiveSession) -> None:
            assert live.session is not None
            if live.resource_listens is not None:
                live.resource_listens.close(uri)
                return
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await live.session.unsubscribe_resource(uri)

        await self._connection.request(f"unsubscribing from {uri!r}", unsubscribe)

    @property
    def subscribed(self) -> list[str]:
        """The URIs with update handlers: a new session (after a reconnect) subscribes to them again."""
        return list(self._subscribers)

    def resource_updated(self, uri: str) -> None:
        """Called by the session for `notifications/resources/updated`: the handlers run in the background."""
        handlers = list(self._subscribers.get(uri, ()))
        group = self._connection.task_group
        if group is None:
            return
        for handler in handlers:
            group.start_soon(_deliver, handler, self._server, uri)

    # -- prompts ------------------------------------------------------------------------------------

    async def list_prompts(self, *, refresh: bool = False) -> list[PromptInfo]:
        """Every prompt the server lists (all pages), with its arguments."""
        listed = await self.list_prompts_mcp(refresh=refresh)
        return [prompt_from_mcp(item, server=self._server) for item in listed]

    async def list_prompts_mcp(self, *, refresh: bool = False) -> list[mcp.Prompt]:
        """`list_prompts` as the server sent them."""

        async def fetch(client: Client, cursor: str | None, mode: CacheMode) -> tuple[list[Any], str | None]:
            page = await client.list_prompts(cursor=cursor, cache_mode=mode)
            return list(page.prompts), page.next_cursor

        return await self._listing("prompts", "listing its prompts", fetch, refresh=refresh)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> PromptMessages:
        """The prompt's messages, its arguments filled in by the server."""
        result = await self.get_prompt_mcp(name, arguments)
        return PromptMessages(
            server=self._server,
            name=name,
            description=result.description,
            messages=prompt_messages_from_mcp(result.messages),
        )

    async def get_prompt_mcp(self, name: str, arguments: dict[str, str] | None = None) -> mcp.GetPromptResult:
        """`get_prompt` as the server answered it."""

        async def get(live: LiveSession) -> mcp.GetPromptResult:
            return await _client(live).get_prompt(name, arguments or {})

        return await self._connection.request(f"getting the prompt {name!r}", get)

    # -- completion ---------------------------------------------------------------------------------

    async def complete_template_argument(
        self, uri_template: str, argument: str, value: str, *, context: dict[str, str] | None = None
    ) -> list[str]:
        """Values the server suggests for `argument` of a resource template, given what is typed so far."""
        ref = mcp.ResourceTemplateReference(type="ref/resource", uri=uri_template)
        return await self._complete(ref, argument, value, context)

    async def complete_prompt_argument(
        self, prompt: str, argument: str, value: str, *, context: dict[str, str] | None = None
    ) -> list[str]:
        """Values the server suggests for `argument` of a prompt, given what is typed so far."""
        return await self._complete(
            mcp.PromptReference(type="ref/prompt", name=prompt), argument, value, context
        )

    async def _complete(
        self,
        ref: mcp.ResourceTemplateReference | mcp.PromptReference,
        argument: str,
        value: str,
        context: dict[str, str] | None,
    ) -> list[str]:
        result = await self.complete_mcp(ref, {"name": argument, "value": value}, context)
        return list(result.completion.values)

    async def complete_mcp(
        self,
        ref: mcp.ResourceTemplateReference | mcp.PromptReference,
        argument: dict[str, str],
        context: dict[str, str] | None = None,
    ) -> mcp.CompleteResult:
        """`completion/complete` as the server answered it (`total`, `hasMore` kept); no values from a
        server that does not offer completions."""

        async def complete(live: LiveSession) -> mcp.CompleteResult:
            assert live.session is not None
            capabilities = live.session.server_capabilities
            if capabilities is None or capabilities.completions is None:
                return mcp.CompleteResult(completion=mcp.Completion(values=[]))
            return await live.session.complete(ref, argument, context)

        return await self._connection.request(f"completing {argument.get('name')!r}", complete)

    # -- internals ----------------------------------------------------------------------------------

    async def _listing(
        self,
        kind: ListingKind,
        what: str,
        fetch: Callable[[Client, str | None, CacheMode], Awaitable[tuple[list[Any], str | None]]],
        *,
        refresh: bool,
    ) -> list[Any]:
        async def list_all(live: LiveSession) -> list[Any]:
            client = _client(live)
            # 2026-07-28 results say how long they stay fresh: the SDK's cache keeps them that long.
            hinted = speaks_stateless_revision(client.session.protocol_version)
            if refresh:
                live.listings.forget(kind)
            if not hinted and (cached := live.listings.cached(kind)) is not None:
                return cached
            if not _offers(client.session.server_capabilities, kind):
                return []
            generation = live.listings.generation(kind)
            items: list[Any] = []
            cursor: str | None = None
            while True:
                page, cursor = await fetch(client, cursor, "refresh" if refresh else "use")
                items.extend(page)
                if not cursor:
                    break
            if not hinted:
                live.listings.keep(kind, items, generation)
            return items

        return await self._connection.request(what, list_all)

    def _drop(self, uri: str, handler: ResourceUpdateHandler | None) -> None:
        handlers = self._subscribers.get(uri, [])
        if handler is None:
            handlers.clear()
        elif handler in handlers:
            handlers.remove(handler)
        if not handlers:
            self._subscribers.pop(uri, None)


async def _deliver(handler: ResourceUpdateHandler, server: str, uri: str) -> None:
    try:
        await handler(server, uri)
    except Exception:
        # A handler's bug must not take the connections down with it (they share its task group).
        logger.exception("the update handler for %r of server %r failed", uri, server)


def _client(live: LiveSession) -> Client:
    client = live.client
    assert client is not None  # `request_once` sends only on a live session
    return client


def _offers(capabilities: mcp.ServerCapabilities | None, kind: ListingKind) -> bool:
    if capabilities is None:
        return False
    return (capabilities.prompts if kind == "prompts" else capabilities.resources) is not None
