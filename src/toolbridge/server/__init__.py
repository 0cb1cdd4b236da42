"""The HTTP server: an OpenAI-compatible endpoint with MCP tools, and the web page with its JSON API.

    app = create_app(load_config(), store=Store(resolve_database_url()), settings=ServerSettings())
    uvicorn.run(app, host="127.0.0.1", port=8765)

`toolbridge serve` does this; docs/http-api.md describes every endpoint.
"""

from typing import TYPE_CHECKING, Any

from toolbridge.server._settings import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    TOKEN_ENV_VAR,
    ServerSettings,
    settings_from_config,
)

if TYPE_CHECKING:
    from toolbridge.server._uvicorn import listen, run_server
    from toolbridge.server.app import STATIC_DIR, create_app

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "STATIC_DIR",
    "TOKEN_ENV_VAR",
    "ServerSettings",
    "create_app",
    "listen",
    "run_server",
    "settings_from_config",
]


def __getattr__(name: str) -> Any:
    # The app needs FastAPI (the serve extra); the uvicorn runner, which the gateway and the test kit's
    # servers use, does not: each is imported when asked for.
    if name in ("listen", "run_server"):
        from toolbridge.server import _uvicorn

        return getattr(_uvicorn, name)
    if name in ("STATIC_DIR", "create_app"):
        from toolbridge.server import app

        return getattr(app, name)
    raise AttributeError(f"module 'toolbridge.server' has no attribute {name!r}")
