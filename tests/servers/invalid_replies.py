"""A hostile stdio server: it speaks JSON-RPC by hand so it can send replies the MCP SDK cannot parse.

Its tools: `surrogate` answers with a lone surrogate ("\\ud800") in the result, `not_an_object` answers
with `"result": 5`, `unparseable` with a line that is not JSON at all (and so names no request),
`echo` answers properly. `--deep-schema` makes `tools/list` describe a tool whose schema is nested
200 levels deep; `--bad-handshake` answers `initialize` with a lone surrogate.

Run: python tests/servers/invalid_replies.py [--deep-schema] [--bad-handshake]
"""

from __future__ import annotations

import json
import sys
from typing import Any

DEEP_SCHEMA = "--deep-schema" in sys.argv
BAD_HANDSHAKE = "--bad-handshake" in sys.argv


def nested_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def tool(name: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} tool.", "inputSchema": schema or {"type": "object"}}


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def send(line: str) -> None:
    # Straight to the byte stream: this server's whole point is to write what a client must survive.
    sys.stdout.buffer.write(line.encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


def reply(request_id: Any, result: Any) -> None:
    send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def answer(request: dict[str, Any]) -> None:
    request_id, method = request["id"], request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        if BAD_HANDSHAKE:
            reply(request_id, {"protocolVersion": "\ud800"})
            return
        reply(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "invalid_replies", "version": "1.0"},
            },
        )
    elif method == "tools/list":
        tools = [tool("echo"), tool("surrogate"), tool("not_an_object"), tool("unparseable")]
        if DEEP_SCHEMA:
            tools.append(tool("deep", nested_schema(200)))
        reply(request_id, {"tools": tools})
    elif method == "tools/call":
        name = params.get("name")
        if name == "surrogate":
            reply(request_id, text_result("before \ud800 after"))
        elif name == "not_an_object":
            reply(request_id, 5)
        elif name == "unparseable":
            send("this is not JSON")
            reply(request_id, text_result("after the noise"))
        else:
            reply(request_id, text_result(json.dumps(params.get("arguments") or {})))
    elif method == "ping":
        reply(request_id, {})
    else:
        error = {"code": -32601, "message": f"method {method!r} not found"}
        send(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" in message and "method" in message:
            answer(message)


if __name__ == "__main__":
    main()
