"""`create_app()`: the FastAPI application behind `toolbridge serve`.

One `Toolbox` (the MCP sessions) lives as long as the app; each agent's model is resolved once and
reused; chat runs live in the app's task group, so shutting down cancels them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from toolbridge.agent.server_requests import ServerRequests
from toolbridge.config import Config
from toolbridge.server import _operations
from toolbridge.server._access import AccessMiddleware, KeysRequired
from toolbridge.server._agents import AgentCatalog
from toolbridge.server._errors import ApiError, install_error_handlers
from toolbridge.server._limits import UsageLimits
from toolbridge.server._metering import metered_sampling
from toolbridge.server._security import BodyLimitMiddleware, SecurityMiddleware
from toolbridge.server._settings import ServerSettings
from toolbridge.server._state import ServerState
from toolbridge.server.anthropic import routes as anthropic_messages
from toolbridge.server.http_tools import routes as http_tools
from toolbridge.server.openai import chat_completions, responses_route
from toolbridge.server.web import resources, routes, sign_in
from toolbridge.server.web.asks import WebAsker
from toolbridge.server.web.chats import ChatHub
from toolbridge.store import CallLog, Store
from toolbridge.telemetry.metrics import install_metrics
from toolbridge.tools import Toolbox

__all__ = ["STATIC_DIR", "create_app"]

STATIC_DIR = Path(__file__).resolve().parent / "web" / "static"
NOBODY_TO_ASK = "toolbridge serve has nobody to ask (the OpenAI endpoint answers programs)"


def create_app(config: Config, *, store: Store, settings: ServerSettings | None = None) -> FastAPI:
    """The app for `config`'s agents and servers, keeping chats and the tool-call log in `store`.

    `settings` (default: `ServerSettings()`) must name the host and port the app is served on: the
    Host and Origin checks accept only those (and localhost).
    """
    settings = settings or ServerSettings()
    install_metrics()  # for /metrics
    limits = UsageLimits(settings.limits, store)
    keys_required = KeysRequired(store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await keys_required.start()  # with users now, keys are required from the first request on
        # Servers' questions go to the web page's chat whose call waits on them (else they are
        # declined); sampling is answered by the server's sampling model or the default one, charged
        # to the user whose run made the call; roots are only those a server's config gives it.
        asker = WebAsker(timeout=settings.approval_timeout)
        requests = ServerRequests(
            config, asker=asker, non_interactive=NOBODY_TO_ASK, sampling_model=metered_sampling(limits)
        )
        toolbox = Toolbox(config, features=requests.features())
        toolbox.observers.append(
            CallLog(store.log_tool_calls)
        )  # every call: agent runs, /v1, tools over HTTP
        async with toolbox, anyio.create_task_group() as runs:
            catalog = AgentCatalog(config, store, toolbox.calls)
            chats = asker.hub = ChatHub(catalog, store, settings, runs, limits=limits)
            await chats.start()
            app.state.toolbridge = ServerState(settings, store, toolbox, catalog, chats, asker)
            app.state.sign_ins = sign_in.SignIns(config, runs)
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await chats.finish_runs(_grace_left(app))
                runs.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await catalog.aclose()
                    await requests.aclose()

    app = FastAPI(
        title="toolbridge",
        summary="Any LLM with MCP tools: an OpenAI-compatible endpoint and the web page's JSON API.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    install_error_handlers(app)
    # Added in reverse: Host and Origin first, then the key, and only then is a body read.
    app.add_middleware(BodyLimitMiddleware, settings=settings)
    app.add_middleware(
        AccessMiddleware, settings=settings, store=store, limits=limits, keys_required=keys_required
    )
    app.add_middleware(SecurityMiddleware, settings=settings)
    app.include_router(chat_completions.router)
    app.include_router(responses_route.router)
    app.include_router(anthropic_messages.router)
    app.include_router(routes.router)
    app.include_router(resources.router)
    app.include_router(sign_in.router)
    app.include_router(_operations.router)
    app.include_router(http_tools.router)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        page = STATIC_DIR / "index.html"
        if not page.is_file():
            raise ApiError(404, f"the web page is missing from this install ({page}); reinstall toolbridge")
        return FileResponse(page, headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    return app


def _grace_left(app: FastAPI) -> float:
    """Seconds left of the shutdown grace period `run_server` started on a signal (0: none started)."""
    deadline: float | None = getattr(app.state, "shutdown_deadline", None)
    return 0.0 if deadline is None else max(0.0, deadline - time.monotonic())
