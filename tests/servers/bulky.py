"""Resources of any size, made on demand: `text://{chars}` is that many characters of text, and
`bytes://{count}` that many bytes of binary.

Run: python tests/servers/bulky.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

from _cli import run
from mcp.server.mcpserver import MCPServer

server = MCPServer("bulky", log_level="WARNING")


@server.resource(
    "text://{chars}", name="text", description="`chars` characters of text.", mime_type="text/plain"
)
def text(chars: str) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return "".join(alphabet[i % 26] for i in range(int(chars)))


@server.resource(
    "bytes://{count}", name="bytes", description="`count` bytes.", mime_type="application/octet-stream"
)
def blob(count: str) -> bytes:
    return bytes(i % 256 for i in range(int(count)))


if __name__ == "__main__":
    run(server)
