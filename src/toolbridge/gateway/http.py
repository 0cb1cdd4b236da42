"""The gateway over HTTP: streamable HTTP at `/mcp`, and the older SSE transport at `/sse` (its
messages posted to `/messages/`) for clients that predate it; `/metrics` in Prometheus' text format,
for whoever holds a token that reaches every tool (or anyone, without tokens).

```python
settings = HttpSettings.from_config(config, port=8766)
settings.check_bind()
app = http_app(Gateway(Toolbox(config)), settings)  # the app opens the toolbox and closes it
uvicorn.run(app, host=settings.host, port=settings.port)
```
Both transports are the official SDK's; in front of them every request passes `HttpGuard` (Host,
Origin, body size, bearer token).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from toolbridge._request_guard import accepted_hosts, is_loopback
from toolbridge._token import TOKEN_ENV_VAR, token_from_env, token_problem, weak_token_problem
from toolbridge.config import Config
from toolbridge.config.gateway import DEFAULT_GATEWAY_PORT, TokenReach
from toolbridge.errors import ConfigError
from toolbridge.gateway._events import RETRY_MS, RecentEvents
from toolbridge.gateway._guard import HttpGuard
from toolbridge.gateway.server import Gateway

__all__ = ["COMMAND_LINE_TOKEN", "TOKEN_ENV_VAR", "HttpSettings", "http_app"]

COMMAND_LINE_TOKEN = "--token"
"""The name the token from `--token` (or `$TOOLBRIDGE_TOKEN`) goes by: it may use every tool."""
MESSAGES_PATH = "/messages/"


class HttpSettings(BaseModel):
    """Where the gateway listens and who may use it: the config's `gateway` section, with
    `$TOOLBRIDGE_TOKEN` and the command line's options over it."""

    model_config = ConfigDict(frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_GATEWAY_PORT, ge=0, le=65535)
    tokens: dict[str, str] = Field(default_factory=dict, repr=False)
    """Token name -> token; with any, every request needs one of them."""
    token_rules: dict[str, TokenReach] = Field(default_factory=dict)
    """Token name -> what its clients reach: tools, resources, prompts (a name not here: everything)."""
    max_body_bytes: int = 1_000_000
    allowed_hosts: list[str] = Field(default_factory=list)

    @classmethod
    def from_config(
        cls, config: Config, *, host: str | None = None, port: int | None = None, token: str | None = None
    ) -> HttpSettings:
        config.check_resolved("gateway", used_by="toolbridge gateway --http")
        section = config.gateway
        where = str(config.path) if config.path else None
        tokens = {name: entry.token for name, entry in section.tokens.items()}
        token = token if token is not None else token_from_env()
        if token is not None:
            if problem := token_problem(token, sources=f"--token or ${TOKEN_ENV_VAR}"):
                raise ConfigError(problem, path=where)
            tokens[COMMAND_LINE_TOKEN] = token
        return cls(
            host=host or section.host,
            port=section.port if port is None else port,
            tokens=tokens,
            token_rules={
                name: TokenReach(tools=entry.tools, servers=entry.servers)
                for name, entry in section.tokens.items()
            },
            max_body_bytes=section.max_body_bytes,
            allowed_hosts=section.allowed_hosts,
        )

    def check_bind(self) -> None:
        """Refuse to listen beyond this machine without a token, or with one easy to guess: anyone who can
        reach it could use the tools."""
        if is_loopback(self.host):
            return
        for name, token in self.tokens.items():
            which = (
                f"the token of --token or ${TOKEN_ENV_VAR}"
                if name == COMMAND_LINE_TOKEN
                else f"token {name!r} (gateway.tokens.{name}.token)"
            )
            if problem := weak_token_problem(token, host=self.host, which=which):
                raise ConfigError(problem)
        if not self.tokens:
            raise ConfigError(
                f"refusing to listen on {self.host} without a token: anyone who can reach this address "
                f"could run your tools. Pass --token (or set ${TOKEN_ENV_VAR}, or gateway.tokens in the "
                "config), or bind to 127.0.0.1."
            )

    def accepted_hosts(self) -> set[str]:
        """`Host` header values accepted: loopback names, the bound address and `allowed_hosts`, with the port."""
        return accepted_hosts(self.host, self.port, self.allowed_hosts)


def http_app(gateway: Gateway, settings: HttpSettings) -> Starlette:
    """The gateway as an ASGI app; its lifespan opens the toolbox and closes it with every session."""
    # Host and Origin are checked by HttpGuard for every path, so the SDK's own checks stay off.
    manager = StreamableHTTPSessionManager(
        app=gateway.server,
        max_request_body_size=settings.max_body_bytes,
        event_store=RecentEvents(),  # resumable streams, each opened by a priming event
        retry_interval=RETRY_MS,
    )
    sse = SseServerTransport(MESSAGES_PATH, max_request_body_size=settings.max_body_bytes)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with gateway.toolbox, gateway.running(), manager.run():
            yield

    guard = Middleware(
        HttpGuard,
        hosts=settings.accepted_hosts(),
        tokens=settings.tokens,
        max_body_bytes=settings.max_body_bytes,
        port=settings.port,
    )

    async def metrics(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        from toolbridge.telemetry.metrics import METRICS

        user = request.scope.get("user")
        token = user.access_token.client_id if isinstance(user, AuthenticatedUser) else None
        rule = settings.token_rules.get(token) if token is not None else None
        if settings.tokens and (token is None or (rule is not None and not rule.reaches_everything)):
            # Its labels name every server and tool: not for a token that reaches only some.
            message = (
                "/metrics needs a token that reaches every tool (--token, or a gateway.tokens entry "
                "without tools or servers)"
            )
            return PlainTextResponse(message, status_code=403)
        return Response(generate_latest(METRICS), media_type=CONTENT_TYPE_LATEST)

    routes = [
        Route("/metrics", endpoint=metrics, methods=["GET"]),
        Route("/mcp", endpoint=StreamableHTTPASGIApp(manager)),
        Route("/sse", endpoint=_SseEndpoint(gateway, sse), methods=["GET"]),
        Mount(MESSAGES_PATH, app=sse.handle_post_message),
    ]
    return Starlette(routes=routes, middleware=[guard], lifespan=lifespan)


class _SseEndpoint:
    """`GET /sse`: one client's event stream, served by the gateway for as long as it stays open."""

    def __init__(self, gateway: Gateway, transport: SseServerTransport) -> None:
        self._gateway = gateway
        self._transport = transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with self._transport.connect_sse(scope, receive, send) as (read, write):
            await self._gateway.server.run(read, write, self._gateway.initialization_options())
