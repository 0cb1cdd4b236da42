"""Optional dependencies: a feature that needs one checks for it where it is used.

`pip install toolbridge` is the library and the command line (MCP, the agent, the `demo` model); each
extra in pyproject.toml adds what one feature needs (`openai`, `anthropic`, `store`, `serve`, `gateway`,
`postgres`, `otel`, `fast-http`, `code`; `all` is every one). Code that needs one calls `require(...)` before
importing it, so that a missing extra is a `MissingExtraError` naming the line to run, not a
`ModuleNotFoundError` from deep inside.
"""

from __future__ import annotations

import importlib
import importlib.util

from toolbridge.errors import MissingExtraError

__all__ = ["EXTRA_MODULES", "MissingExtraError", "findable", "installed", "require", "require_extra"]


EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "store": ("sqlalchemy", "alembic"),
    "serve": ("fastapi", "sqlalchemy", "alembic", "httptools", "prometheus_client", "pythonjsonlogger"),
    "gateway": ("sqlalchemy", "alembic", "httptools", "prometheus_client"),
    "postgres": ("psycopg",),
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
    "fast-http": ("aiohttp", "httpx_aiohttp"),
    "code": ("pydantic_monty",),
}
"""What each extra in pyproject.toml brings, as the modules toolbridge imports from it
(tests/test_packaging.py holds the two together)."""


def require_extra(extra: str, feature: str) -> None:
    """Raise `MissingExtraError` unless every module of `extra` is there: found, not imported (a command
    checked at its start imports each when it uses it, Alembic only to migrate)."""
    for module in EXTRA_MODULES[extra]:
        require(module, extra, feature, load=False)


def require(module: str, extra: str, feature: str, *, load: bool = True) -> None:
    """Import `module` (`load=False`: only find it, for a module used later if at all), or raise
    `MissingExtraError` saying that `feature` needs `toolbridge[extra]`."""
    if not (installed(module) if load else findable(module)):
        raise MissingExtraError(extra, feature, module=module)


def installed(module: str) -> bool:
    """Whether `module` imports (it is imported: it is about to be used). A module that is there but
    fails to import for another reason (one of its own dependencies missing) raises as itself."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or not (module == error.name or module.startswith(f"{error.name}.")):
            raise
        return False
    return True


def findable(module: str) -> bool:
    """Whether `module` is there to import, without importing it (Alembic, needed only to migrate,
    costs a process a fifth of a second to import)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError as error:
        if error.name is None or not (module == error.name or module.startswith(f"{error.name}.")):
            raise
        return False
