"""Running `toolbridge gateway` for a test: a config in tmp_path, served in this process over memory
streams (`gateway`), or as the real command over stdio (`gateway_process`) where the process is the
point.

    async with Client(gateway(tmp_path, {"basic": our_server("basic")}, agent="reader")) as client:
        ...

Both build the same gateway (`GatewaySetup`, as the command does) and log its calls to tmp_path/calls.db;
the upstream servers are real processes either way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.memory import create_client_server_memory_streams

import toolbridge
from server_paths import test_server_path
from toolbridge.config import load_config
from toolbridge.gateway import GatewaySetup
from toolbridge.store import CallLog, Store

# The SDK starts a server with a bare environment: point it at the toolbridge under test, not whichever
# one the interpreter would find installed.
SOURCE = str(Path(toolbridge.__file__).resolve().parent.parent)
SHUTDOWN_GRACE = 10.0


def our_server(script: str, **options: Any) -> dict[str, Any]:
    """A config entry running one of tests/servers/ over stdio."""
    return {"command": sys.executable, "args": [test_server_path(script)], **options}


def write_config(tmp_path: Path, servers: dict[str, dict[str, Any]], **config: Any) -> Path:
    path = tmp_path / "toolbridge.json"
    path.write_text(json.dumps({"mcpServers": servers, **config}), encoding="utf-8")
    return path


def gateway(
    tmp_path: Path,
    servers: dict[str, dict[str, Any]],
    *,
    agent: str | None = None,
    native: bool = True,
    **config: Any,
) -> InProcessGateway:
    """The gateway `toolbridge gateway [--agent AGENT] [--no-native]` serves for a config with these
    `mcpServers` (and any other sections), as a transport for the SDK's `Client`."""
    setup = GatewaySetup.of(load_config(write_config(tmp_path, servers, **config)), agent, native=native)
    return InProcessGateway(setup, tmp_path / "calls.db")


class InProcessGateway:
    """A `Transport`: the gateway serving one client over memory streams, as `serve_stdio` serves stdin.
    A class, not a generator context manager, so a test may connect again after its client is gone."""

    def __init__(self, setup: GatewaySetup, db: Path) -> None:
        self.setup = setup
        self.db = db
        self._streams: Any = None

    async def __aenter__(self) -> TransportStreams:
        self._streams = self._serve()
        streams: TransportStreams = await self._streams.__aenter__()
        return streams

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._streams.__aexit__(*exc_info)
        return result

    @asynccontextmanager
    async def _serve(self) -> AsyncIterator[TransportStreams]:
        with Store(f"sqlite:///{self.db}") as store:
            served = self.setup.build(call_log=CallLog(store.log_tool_calls))
            async with (
                served.toolbox,
                create_client_server_memory_streams() as (client_streams, server_streams),
                anyio.create_task_group() as serving,
            ):
                serving.start_soon(served.serve_one_client, *server_streams)
                try:
                    yield client_streams
                finally:
                    # The client has gone: end the server's input as a closed stdin would, and let it
                    # finish (the call log is written on its way out); cancel it if it hangs.
                    await client_streams[1].aclose()
                    serving.cancel_scope.deadline = anyio.current_time() + SHUTDOWN_GRACE


def gateway_process(
    tmp_path: Path, servers: dict[str, dict[str, Any]], *args: str, **config: Any
) -> StdioServerParameters:
    """`toolbridge gateway` itself over stdio for a config with these `mcpServers` (and any other sections)."""
    path = write_config(tmp_path, servers, **config)
    command = ["-m", "toolbridge", "gateway", "--config", str(path), "--db", str(tmp_path / "calls.db")]
    environment = {**get_default_environment(), "PYTHONPATH": SOURCE}
    return StdioServerParameters(command=sys.executable, args=[*command, *args], env=environment)
