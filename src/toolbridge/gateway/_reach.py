"""What the client of a request may reach: what the gateway offers, or, for a client holding a named
HTTP token, what that token's rule allows (`gateway.tokens` in the config, `TokenReach`).

A rule decides everything its clients reach. Tools pass its `tools` filter and come from its servers;
resources, resource templates, prompts and completions come from its servers only: those it names, or,
without `servers`, the servers of the tools its `tools.allow` lets it use (every server without either).
What a client may not reach is not listed; a resource or prompt asked for directly is answered as for
something that does not exist, a tool called anyway is refused as not allowed, naming the token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from mcp.server.auth.middleware.auth_context import get_access_token

from toolbridge.config.gateway import TokenReach
from toolbridge.tools import Toolbox, ToolFilter
from toolbridge.types import ToolSpec

__all__ = ["CallerReach", "TokenRule"]

TokenRule = tuple[str, TokenReach]
"""A token's name and its rule."""


class CallerReach:
    def __init__(
        self,
        toolbox: Toolbox,
        offers: Callable[[ToolSpec], bool],
        rules: Mapping[str, TokenReach] | None = None,
    ) -> None:
        """`offers`: whether the gateway offers a tool; `rules`: token name -> what its clients reach
        (a name not in it: everything offered)."""
        self._toolbox = toolbox
        self._offers = offers
        self._rules = rules or {}

    def rule(self) -> TokenRule | None:
        """The token the request came with and its rule (None: no token, or one that reaches everything).
        The SDK hands the authenticated token to the handler in a context variable."""
        token = get_access_token()
        if token is None or token.client_id not in self._rules:
            return None
        return token.client_id, self._rules[token.client_id]

    def tool_filter(self, left_out: str) -> ToolFilter:
        """Which tools the client of this request may call, and why not (the call pipeline's `allows`):
        those the gateway offers (`left_out` says why it leaves the others out) that its token reaches."""
        offers, rule = self._offers, self.rule()
        if rule is None:
            return lambda tool: None if offers(tool) else left_out
        name = rule[0]

        def allows(tool: ToolSpec) -> str | None:
            if not offers(tool):
                return left_out
            if not self.may_use(rule, tool):
                return (
                    f"the token {name!r} may not use it: gateway.tokens.{name} in the gateway's config "
                    "says which tools it reaches"
                )
            return None

        return allows

    @staticmethod
    def may_use(rule: TokenRule | None, tool: ToolSpec) -> bool:
        if rule is None:
            return True
        reach = rule[1]
        return (reach.servers is None or tool.source in reach.servers) and reach.tools.allows(tool)

    async def servers(self, offered: Sequence[str]) -> list[str]:
        """Which of the `offered` servers (their resources, prompts, completions) the caller reaches."""
        rule = self.rule()
        if rule is None or not rule[1].limits_servers:
            return list(offered)
        reach = rule[1]
        if reach.servers is not None:
            return [server for server in offered if server in reach.servers]
        tools = await self._toolbox.registry.list_tools()
        sources = {tool.source for tool in tools if self._offers(tool) and self.may_use(rule, tool)}
        return [server for server in offered if server in sources]
