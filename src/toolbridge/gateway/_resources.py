"""The gateway's resources and resource templates: every offered server's, URIs unique (see `_uris`).

Listings and reads pass the servers' own MCP results on, every field kept (annotations, icons, `_meta`);
only URIs shared by several servers are rewritten. A client sees and reads only the resources of the
servers it reaches (`_reach`); a URI of another server is refused as one no server has. URIs are shown
the same way to every client, so a link one client passes to another means the same resource.
"""

from __future__ import annotations

from typing import Any

import mcp_types as mcp
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp_types import INVALID_PARAMS

from toolbridge.errors import ServerError
from toolbridge.gateway._paging import page
from toolbridge.gateway._upstream import Upstream, upstream_error
from toolbridge.gateway._uris import UriTable

__all__ = ["GatewayResources", "UpstreamUri"]

UpstreamUri = tuple[str, str]
"""(server, the URI that server knows)."""


class GatewayResources:
    def __init__(self, upstream: Upstream, *, page_size: int) -> None:
        self._upstream = upstream
        self._page_size = page_size
        self.table = UriTable()
        """How URIs are shown, as of the last listing."""

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListResourcesResult:
        resources, _ = await self._refresh()
        reachable = await self._upstream.reachable()
        shown = [
            item.model_copy(update={"uri": self.table.resource(server, str(item.uri))})
            for server, items in resources.items()
            if server in reachable
            for item in items
        ]
        items, next_cursor = page(shown, params.cursor if params else None, self._page_size)
        return mcp.ListResourcesResult(resources=items, next_cursor=next_cursor)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListResourceTemplatesResult:
        _, templates = await self._refresh()
        reachable = await self._upstream.reachable()
        shown = [
            item.model_copy(update={"uri_template": self.table.template(server, item.uri_template)})
            for server, items in templates.items()
            if server in reachable
            for item in items
        ]
        items, next_cursor = page(shown, params.cursor if params else None, self._page_size)
        return mcp.ListResourceTemplatesResult(resource_templates=items, next_cursor=next_cursor)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: mcp.ReadResourceRequestParams
    ) -> mcp.ReadResourceResult | mcp.InputRequiredResult:
        uri = str(params.uri)
        server, upstream_uri = await self.route(uri)
        content = self._upstream.content(server)
        try:
            result = await self._upstream.passed_on(
                ctx, server, params, lambda: content.read_resource_mcp(upstream_uri)
            )
        except ServerError as exc:
            raise upstream_error(exc) from exc
        if isinstance(result, mcp.InputRequiredResult):  # the client answers, and reads again
            return result
        contents = [
            item.model_copy(
                update={
                    "uri": uri
                    if str(item.uri) == upstream_uri
                    else self.table.resource(server, str(item.uri))
                }
            )
            for item in result.contents
        ]
        return result.model_copy(update={"contents": contents})

    async def route(self, uri: str) -> UpstreamUri:
        """The server a URI the gateway showed belongs to; raises an `MCPError` the client can act on.
        A server the client does not reach is no answer: its URIs are refused as unknown ones."""
        servers = self._upstream.servers
        found = self.table.route(uri, servers)
        if found is None:
            await self._refresh()  # the client may read before it lists, or the lists changed
            found = self.table.route(uri, servers)
        if found is None or found[0] not in await self._upstream.reachable():
            raise MCPError(
                INVALID_PARAMS,
                f"No server behind this gateway has the resource {uri!r}; list resources and resource "
                "templates (resources/list, resources/templates/list) and use a URI from them.",
                {"uri": uri},  # what MCP's resource-not-found error names (SEP-2164)
            )
        return found

    async def route_template(self, uri_template: str) -> UpstreamUri:
        """The server a URI template the gateway showed belongs to, and that server's own template; a
        server the client does not reach is no answer, as for `route`."""
        servers = self._upstream.servers
        found = self.table.template_route(uri_template, servers)
        if found is None:
            await self._refresh()
            found = self.table.template_route(uri_template, servers)
        if found is None or found[0] not in await self._upstream.reachable():
            raise MCPError(
                INVALID_PARAMS,
                f"No server behind this gateway has the resource template {uri_template!r}; "
                "list them with resources/templates/list.",
            )
        return found

    def shown_block(self, server: str, block: mcp.ContentBlock) -> mcp.ContentBlock:
        """A content block from `server` with the URI it names shown as the gateway shows it."""
        if isinstance(block, mcp.EmbeddedResource):
            resource = block.resource
            shown = resource.model_copy(update={"uri": self.table.resource(server, str(resource.uri))})
            return block.model_copy(update={"resource": shown})
        if isinstance(block, mcp.ResourceLink):
            return block.model_copy(update={"uri": self.table.resource(server, str(block.uri))})
        return block

    async def _refresh(self) -> tuple[dict[str, list[mcp.Resource]], dict[str, list[mcp.ResourceTemplate]]]:
        resources = await self._upstream.gather(lambda content: content.list_resources_mcp())
        templates = await self._upstream.gather(lambda content: content.list_resource_templates_mcp())
        self.table = UriTable(
            {server: [str(item.uri) for item in items] for server, items in resources.items()},
            {server: [item.uri_template for item in items] for server, items in templates.items()},
        )
        return resources, templates
