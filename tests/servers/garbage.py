"""A stdio server that puts things that are not JSON-RPC on its stdout, at start and during a call.

The SDK's server diverts fd 1 to stderr while it serves, so a mid-session stray write is simulated
the way a native library would make one: straight to the wire's file descriptor.
"""

from __future__ import annotations

import os

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
from mcp.server.mcpserver import MCPServer

AT_START = b'Server starting... (this line is not JSON-RPC)\n{"json": "but not JSON-RPC"}\n'
IN_CALL = b"debug output that should have gone to stderr\n"

server = MCPServer("garbage", log_level="WARNING")
_wire = os.fstat(1)


def _wire_fd() -> int:
    """The descriptor the SDK serves the protocol on (a duplicate of our original stdout)."""
    for fd in range(3, 256):
        try:
            info = os.fstat(fd)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) == (_wire.st_dev, _wire.st_ino):
            return fd
    raise RuntimeError("the protocol's stdout descriptor was not found")


@server.tool()
def noisy(text: str) -> str:
    """Write a stray line on the protocol stream, then answer normally."""
    os.write(_wire_fd(), IN_CALL)
    return text


if __name__ == "__main__":
    # One write, so it cannot interleave with the transport's own writes.
    os.write(1, AT_START)
    server.run("stdio")
