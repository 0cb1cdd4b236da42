"""One path for every tool call: the same four refusals (an unknown tool, a tool the agent's rules leave
out, a call that needs approval nobody can give, invalid arguments) through all five surfaces (`ask`,
`call`, the gateway over stdio and over HTTP, tools over HTTP, `/v1/chat/completions`) read the same
words, log the same row with their caller, and each make an `execute_tool` span (sent over real OTLP).

Every surface is a real `toolbridge` process; the model behind `ask` and `/v1` is scripted over the real
OpenAI wire, and sees the results as tool messages.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from otlp_receiver import Receiver, attributes, receiver
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import free_port, start_process, toolbridge_command, write_config

from server_paths import test_server_path
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

# situation -> (tool, arguments, error kind)
SITUATIONS: dict[str, tuple[str, dict[str, Any], str]] = {
    "unknown": ("no_such_tool", {}, "unknown_tool"),
    "left out": ("pid", {}, "not_allowed"),
    "unapproved": ("fail", {"message": "never sent"}, "denied"),
    "invalid": ("add", {"a": "one", "b": 2}, "invalid_arguments"),
}
CALLS = [ToolCallSpec(tool, arguments) for tool, arguments, _ in SITUATIONS.values()]
TIMEOUT = 60


def _config(tmp_path: Path, model: ScriptedModelServer, otlp: Receiver) -> Path:
    basic = {"command": sys.executable, "args": [str(test_server_path("basic"))]}
    default = {"tools": {"deny": ["pid"]}, "approval": {"tools": {"fail": "always"}}}
    path = write_config(tmp_path, model, mcp_servers={"basic": basic}, agents={"default": default})
    data = json.loads(path.read_text())
    data["telemetry"] = {"otlp_endpoint": f"http://127.0.0.1:{otlp.server_port}"}
    path.write_text(json.dumps(data))
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLBRIDGE_TOKEN": ""}
    return subprocess.run(
        toolbridge_command(*args),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _tool_messages(model: ScriptedModelServer) -> dict[str, str]:
    """Tool name -> the result the model read, from the last request the scripted model received (an
    error result reaches a model marked `Error: `, the wire's way to say it failed)."""
    request = model.requests[-1]
    names = {
        call["id"]: call["function"]["name"]
        for message in request.messages
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or []
    }
    return {
        names[message["tool_call_id"]]: message["content"].removeprefix("Error: ")
        for message in request.messages
        if message["role"] == "tool"
    }


def _by_tool(texts: dict[str, str]) -> dict[str, str]:
    return {situation: texts[tool] for situation, (tool, _, _) in SITUATIONS.items()}


def through_ask(config: Path, db: Path, model: ScriptedModelServer) -> dict[str, str]:
    model.add(Turn.tool_calls(*CALLS), Turn.text("Done."))
    done = _run("ask", "Try the tools.", "--config", str(config), "--db", str(db))
    assert done.returncode == 0, done.stderr
    return _by_tool(_tool_messages(model))


def through_call(config: Path, db: Path) -> dict[str, str]:
    texts = {}
    for tool, arguments, _ in SITUATIONS.values():
        done = _run("call", tool, json.dumps(arguments), "--config", str(config), "--db", str(db), "--json")
        assert done.returncode == 1, done.stderr
        texts[tool] = json.loads(done.stdout)["content"][0]["text"]
    return _by_tool(texts)


async def _call_all(client: Client) -> dict[str, str]:
    texts = {}
    for tool, arguments, _ in SITUATIONS.values():
        result = await client.call_tool(tool, arguments)
        assert result.is_error, (tool, result)
        texts[tool] = result.content[0].text  # type: ignore[union-attr]
    return _by_tool(texts)


def through_gateway_stdio(config: Path, db: Path) -> dict[str, str]:
    async def main() -> dict[str, str]:
        gateway = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolbridge", "gateway", "--config", str(config), "--db", str(db)],
            env=dict(os.environ),
        )
        async with Client(gateway) as client:
            return await _call_all(client)

    return anyio.run(main)


@contextmanager
def _http_gateway(config: Path, db: Path) -> Iterator[str]:
    port = free_port()
    command = toolbridge_command(
        "gateway", "--http", "--port", str(port), "--config", str(config), "--db", str(db)
    )
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:  # polling for readiness
            assert process.poll() is None, "the gateway exited while starting"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the gateway did not start listening"
                time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)  # it writes its call log and flushes its spans on the way out
        assert process.wait(TIMEOUT) == 0


def through_gateway_http(url: str) -> dict[str, str]:
    async def main() -> dict[str, str]:
        async with (
            httpx2.AsyncClient(timeout=TIMEOUT) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await _call_all(client)

    return anyio.run(main)


def _rows(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        query = "SELECT tool, server, status, error_kind, error, caller FROM tool_calls ORDER BY id"
        return [dict(row) for row in connection.execute(query)]


def test_four_refusals_read_log_and_trace_the_same_on_all_five_surfaces(tmp_path: Path) -> None:
    db = tmp_path / "toolbridge.db"
    seen: dict[str, dict[str, str]] = {}
    with receiver() as otlp, ScriptedModelServer() as model:
        config = _config(tmp_path, model, otlp)
        seen["ask"] = through_ask(config, db, model)
        seen["call"] = through_call(config, db)
        seen["gateway stdio"] = through_gateway_stdio(config, db)
        with _http_gateway(config, db) as url:
            seen["gateway http"] = through_gateway_http(url + "/mcp")
            gateway_metrics = httpx.get(url + "/metrics", timeout=TIMEOUT).text

        served = start_process(config, f"sqlite:///{db}")
        try:
            http = served.server.http()
            texts = {}
            for tool, arguments, _ in SITUATIONS.values():
                response = http.post(f"/tools/{tool}", json=arguments)
                assert response.status_code in (403, 404, 422), response.text
                texts[tool] = response.json()["error"]["message"]
            seen["tools over http"] = _by_tool(texts)
            model.add(Turn.tool_calls(*CALLS), Turn.text("Done."))
            served.server.openai().chat.completions.create(
                model="default", messages=[{"role": "user", "content": "Try the tools."}]
            )
            seen["/v1"] = _by_tool(_tool_messages(model))
            metrics = http.get("/metrics").text
        finally:
            served.stop()  # flushes its spans

    # The same words everywhere, each naming what went wrong.
    for situation in SITUATIONS:
        messages = {surface: texts[situation] for surface, texts in seen.items()}
        assert len(set(messages.values())) == 1, json.dumps(messages, indent=1)
    words = seen["ask"]
    assert "Unknown tool 'no_such_tool'" in words["unknown"]
    assert "not allowed here" in words["left out"]
    assert "'default'" in words["left out"]
    assert "needs the user's approval" in words["unapproved"]
    assert "'a'" in words["invalid"]

    # The same log row, with its caller: agent (ask and /v1), cli, gateway (stdio and HTTP), openapi.
    rows = _rows(db)
    assert len(rows) == 4 * 6
    callers = {"agent": 8, "cli": 4, "gateway": 8, "openapi": 4}
    for situation, (tool, _, kind) in SITUATIONS.items():
        logged = [row for row in rows if row["tool"] == tool]
        assert {row["caller"]: sum(r["caller"] == row["caller"] for r in logged) for row in logged} == {
            caller: count // 4 for caller, count in callers.items()
        }, situation
        shapes = {(row["server"], row["status"], row["error_kind"], row["error"]) for row in logged}
        assert len(shapes) == 1, shapes
        ((server, status, error_kind, error),) = shapes
        assert (error_kind, error) == (kind, words[situation])
        assert server == ("" if situation == "unknown" else "basic")
        assert status == ("denied" if kind == "denied" else "error")

    # A span per call, on every surface.
    spans = [attributes(span) for _, span in otlp.spans if span.name.startswith("execute_tool ")]
    per_caller: dict[str, int] = {}
    for span in spans:
        per_caller[span["toolbridge.caller"]] = per_caller.get(span["toolbridge.caller"], 0) + 1
    assert per_caller == callers

    # And counted: serve's metrics hold its HTTP-tool and /v1 calls alike, the gateway's its own.
    for text, each in ((metrics, 2), (gateway_metrics, 1)):
        counted = {
            (sample.labels["tool"], sample.labels["outcome"]): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "toolbridge_tool_calls_total"
        }
        # A made-up name is counted as "(unknown)", so names cannot add series without end.
        expected = {(tool, kind): each for tool, _, kind in SITUATIONS.values() if kind != "unknown_tool"}
        assert counted == expected | {("(unknown)", "unknown_tool"): each}
