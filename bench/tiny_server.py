"""A near-free MCP server over stdio, for measuring what a client adds per call.

The SDK's own server spends about a millisecond per call, which hides a client layer of tens of
microseconds. This one answers from a loop over stdin lines with no framework: the 2025-11-25
`initialize` handshake (it does not know `server/discover`, as most servers today), `tools/list` with
one `echo` tool, and `tools/call` of it. Anything else is answered "method not found".

Run: python bench/tiny_server.py (speaks JSON-RPC on stdin/stdout; used by bench/mcp_calls.py)
"""

from __future__ import annotations

import json
import sys
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Return the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True},
}
INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "tiny", "version": "1"},
}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a request, or None when the method is unknown."""
    if method == "tools/call" and params.get("name") == "echo":
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "initialize":
        return INITIALIZED
    if method == "ping":
        return {}
    return None


def main() -> None:
    read, write = sys.stdin.buffer.readline, sys.stdout.buffer
    while line := read():
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification (initialized, cancelled): nothing to answer
        result = answer(message.get("method", ""), message.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"Method not found: {message.get('method')}"}
        else:
            reply["result"] = result
        write.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        write.flush()


if __name__ == "__main__":
    main()
