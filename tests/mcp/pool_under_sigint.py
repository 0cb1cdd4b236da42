"""Helper for test_mcp_pool: opens a pool of two stdio servers, prints their pids, waits for Ctrl-C."""

import sys

import anyio

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerPool


async def main(server_script: str) -> None:
    configs = {
        name: ServerConfig(name=name, transport="stdio", command=sys.executable, args=[server_script])
        for name in ("first", "second")
    }
    async with ServerPool(configs) as pool:
        pids = [(await pool.call_tool(name, "pid", {}, call_id="p")).text for name in configs]
        print(" ".join(pids), flush=True)
        # A call in flight when Ctrl-C comes must not keep anything alive either.
        await pool.call_tool("first", "sleep", {"ms": 60_000}, call_id="s")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
