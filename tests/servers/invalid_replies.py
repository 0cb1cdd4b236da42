"""A hostile stdio server: it speaks JSON-RPC by hand so it can send replies the MCP SDK cannot parse.

Its tools: `surrogate` answers with a lone surrogate ("\\ud800") in the result, `not_an_object` answers
with `"result": 5`, `unparseable` with a line that is not JSON at all (and so names no request),
`echo` answers properly. `--deep-schema` makes `tools/list` describe a tool whose schema is nested
200 levels deep; `--bad-handshake` answers `initialize` with a lone surrogate.

Over HTTP (`--transport http --port N`) it answers each POST with its reply as an application/json body,
the way a streamable-HTTP server may; the line of noise is stdio-only.

Run: python tests/servers/invalid_replies.py [--deep-schema] [--bad-handshake] [--transport stdio|http] [--port N]
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)

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


_out: list[str] = []
"""The lines answering the current request, written by the transport."""


def send(line: str) -> None:
    _out.append(line)


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


def answers(message: dict[str, Any]) -> list[str]:
    _out.clear()
    if "id" in message and "method" in message:
        answer(message)
    return list(_out)


def serve_stdio() -> None:
    for line in sys.stdin:
        if line.strip():
            for reply_line in answers(json.loads(line)):
                # Straight to the byte stream: this server's point is to write what a client must survive.
                sys.stdout.buffer.write(reply_line.encode("utf-8") + b"\n")
                sys.stdout.buffer.flush()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        replies = [line for line in answers(json.loads(body)) if line.startswith("{")]
        if not replies:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        data = replies[-1].encode("utf-8")
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # no server-to-client stream
        self.send_response(405)
        self.send_header("content-length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main() -> None:
    if "--transport" in sys.argv and sys.argv[sys.argv.index("--transport") + 1] == "http":
        from _cli import add_listening_options, listening_socket  # the SDK's import cost: HTTP only

        parser = argparse.ArgumentParser()
        add_listening_options(parser)
        options, _ = parser.parse_known_args()
        http = ThreadingHTTPServer(("127.0.0.1", options.port), _Handler, bind_and_activate=False)
        http.socket = listening_socket(options)
        http.serve_forever()
    else:
        serve_stdio()


if __name__ == "__main__":
    main()
