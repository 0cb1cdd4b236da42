"""Resources of any size, made on demand: `text://{chars}` is that many characters of text, and
`bytes://{count}` that many bytes of binary; the prompt `quote` embeds `text://{chars}`.

Run: python tests/servers/bulky.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage

server = MCPServer("bulky", log_level="WARNING")


@server.resource(
    "text://{chars}", name="text", description="`chars` characters of text.", mime_type="text/plain"
)
def text(chars: str) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return "".join(alphabet[i % 26] for i in range(int(chars)))


@server.prompt(description="`chars` characters of text, embedded as a resource.")
def quote(chars: str) -> list[UserMessage]:
    embedded = mcp.TextResourceContents(uri=f"text://{chars}", mime_type="text/plain", text=text(chars))
    return [UserMessage("Read this."), UserMessage(mcp.EmbeddedResource(type="resource", resource=embedded))]


@server.resource(
    "bytes://{count}", name="bytes", description="`count` bytes.", mime_type="application/octet-stream"
)
def blob(count: str) -> bytes:
    return bytes(i % 256 for i in range(int(count)))


if __name__ == "__main__":
    run(server)
