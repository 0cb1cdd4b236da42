"""The gateway's prompts, named like tools (`server__prompt` when several servers have one of that name),
and argument completion for prompts and resource templates, each sent to the server that owns it.

A client sees, gets and completes only the prompts and templates of the servers it reaches (`_reach`);
another server's is refused as one that does not exist. Names are the same for every client."""

from __future__ import annotations

from typing import Any

import mcp_types as mcp
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp_types import INVALID_PARAMS

from toolbridge.errors import ServerError
from toolbridge.gateway._paging import page
from toolbridge.gateway._resources import GatewayResources
from toolbridge.gateway._upstream import Upstream, upstream_error
from toolbridge.types import qualified_name, split_qualified

__all__ = ["GatewayPrompts", "shown_names"]

OwnedName = tuple[str, str]
"""(server, the name that server gives it)."""


def shown_names(owned: list[OwnedName]) -> dict[str, OwnedName]:
    """Each (server, name) under the name the gateway shows: the bare name unless several servers share
    it, `server__name` for each of them then (the rule `toolbridge tools` follows)."""
    servers_per_name: dict[str, set[str]] = {}
    for server, name in owned:
        servers_per_name.setdefault(name, set()).add(server)
    return {
        (qualified_name(server, name) if len(servers_per_name[name]) > 1 else name): (server, name)
        for server, name in owned
    }


class GatewayPrompts:
    def __init__(self, upstream: Upstream, resources: GatewayResources, *, page_size: int) -> None:
        self._upstream = upstream
        self._resources = resources
        self._page_size = page_size
        self._names: dict[str, OwnedName] = {}

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListPromptsResult:
        prompts = await self._refresh()
        reachable = await self._upstream.reachable()
        shown = {owned: name for name, owned in self._names.items()}
        listed = [
            prompt.model_copy(update={"name": shown[(server, prompt.name)]})
            for server, items in prompts.items()
            if server in reachable
            for prompt in items
        ]
        items, next_cursor = page(listed, params.cursor if params else None, self._page_size)
        return mcp.ListPromptsResult(prompts=items, next_cursor=next_cursor)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: mcp.GetPromptRequestParams
    ) -> mcp.GetPromptResult | mcp.InputRequiredResult:
        server, name = await self._route(params.name)
        content = self._upstream.content(server)
        try:
            result = await self._upstream.passed_on(
                ctx, server, params, lambda: content.get_prompt_mcp(name, params.arguments)
            )
        except ServerError as exc:
            raise upstream_error(exc) from exc
        if isinstance(result, mcp.InputRequiredResult):  # the client answers, and gets the prompt again
            return result
        messages = [
            message.model_copy(update={"content": self._resources.shown_block(server, message.content)})
            for message in result.messages
        ]
        return result.model_copy(update={"messages": messages})

    async def complete(
        self, ctx: ServerRequestContext[Any], params: mcp.CompleteRequestParams
    ) -> mcp.CompleteResult:
        ref: mcp.PromptReference | mcp.ResourceTemplateReference
        if isinstance(params.ref, mcp.PromptReference):
            server, name = await self._route(params.ref.name)
            ref = params.ref.model_copy(update={"name": name})
        else:
            server, template = await self._resources.route_template(params.ref.uri)
            ref = params.ref.model_copy(update={"uri": template})
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        try:
            return await self._upstream.content(server).complete_mcp(ref, argument, context)
        except ServerError as exc:
            raise upstream_error(exc) from exc

    async def _route(self, name: str) -> OwnedName:
        """The server and own name of a prompt the caller reaches; raises an `MCPError` otherwise."""
        if name not in self._names:
            await self._refresh()  # the client may get a prompt without listing, or the lists changed
        reachable = await self._upstream.reachable()
        owned = self._names.get(name)
        if owned is None:
            # A qualified name that did not need qualifying (`docs__review` for `review`) is still clear.
            split = split_qualified(name)
            if split is not None and split in self._names.values():
                owned = split
        if owned is not None and owned[0] in reachable:
            return owned
        known = ", ".join(sorted(shown for shown, (server, _) in self._names.items() if server in reachable))
        known = known or "none"
        raise MCPError(
            INVALID_PARAMS,
            f"No prompt named {name!r} behind this gateway (prompts: {known}); use prompts/list.",
        )

    async def _refresh(self) -> dict[str, list[mcp.Prompt]]:
        prompts = await self._upstream.gather(lambda content: content.list_prompts_mcp())
        self._names = shown_names(
            [(server, prompt.name) for server, items in prompts.items() for prompt in items]
        )
        return prompts
