"""Fixtures for the connection-layer tests.

Starting a Python MCP server costs ~1.5 s (importing the SDK), so tests that do not break their server
share one connection per module; tests that kill or exhaust a server start their own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from toolbridge.mcp import ServerConnection


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    # Module scope lets module-scoped async fixtures (the shared connections) run on the tests' loop.
    return "asyncio"


@pytest.fixture(scope="module")
async def basic(stdio_server) -> AsyncIterator[ServerConnection]:
    """A connection to tests/servers/basic.py over stdio, shared by a module's tests."""
    async with ServerConnection(stdio_server("basic")) as connection:
        yield connection
