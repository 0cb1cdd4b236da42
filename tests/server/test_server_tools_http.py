"""Tools over plain HTTP: `POST /tools/{name}` and the OpenAPI document at `/openapi.json`, against the
real app under uvicorn with real MCP servers behind it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import jsonschema
import pytest
from fuzz_values import FUZZ, json_values, texts
from hypothesis import given
from hypothesis import strategies as st
from openapi_client import OpenApiClient
from openapi_spec_validator import validate
from server_helpers import serve_in_thread
from users_helpers import add_user, bearer, cli_json

from server_paths import test_server_path

SERVERS = {
    "basic": {"command": sys.executable, "args": [test_server_path("basic")]},
    "shapes": {"command": sys.executable, "args": [test_server_path("shapes")]},
}


@pytest.mark.slow
def test_the_document_is_valid_openapi_with_one_operation_per_tool(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, mcp_servers=SERVERS) as server:
        http = server.http()
        document = http.get("/openapi.json").json()
        tools = {tool["name"]: tool for tool in http.get("/api/tools").json()}

    validate(document)  # raises on anything OpenAPI 3.1 does not allow
    assert document["openapi"] == "3.1.0"
    operations = {
        item["post"]["operationId"]: (path, item["post"]) for path, item in document["paths"].items()
    }
    assert set(operations) == set(tools)
    assert {"echo", "weather", "length", "units.to-metres", "calculate"} <= set(operations)

    path, length = operations["length"]
    assert path == "/tools/length"
    assert length["summary"] == "Polyline length"
    assert length["description"] == tools["length"]["description"]
    assert length["tags"] == ["shapes"]
    assert length["x-mcp-annotations"] == {"readOnlyHint": True}
    assert length["requestBody"]["required"] is True
    schemas = document["components"]["schemas"]
    # The tool's own references now point into the document, where its definitions are kept.
    line = schemas["length.input"]["properties"]["line"]
    assert line == {"$ref": "#/components/schemas/length.input/$defs/Polyline"}
    assert schemas["length.output"]["required"] == ["length", "segments"]
    assert operations["units.to-metres"][0] == "/tools/units.to-metres"
    # No output schema: the answer's structured content is untyped; no required argument: no body needed.
    assert "media.output" not in schemas
    assert operations["pid"][1]["requestBody"]["required"] is False
    assert "security" not in document  # no token set


@pytest.mark.slow
def test_a_generic_client_calls_tools_from_the_document(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, mcp_servers=SERVERS) as server:
        client = OpenApiClient(server.http())
        square = [{"x": 0, "y": 0}, {"x": 3, "y": 0}, {"x": 3, "y": 4}]
        measured = client.call("length", {"line": {"points": square, "closed": True}})
        tree = {"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}, {"label": "d"}]}
        counted = client.call("count_nodes", {"tree": tree})
        metres = client.call("units.to-metres", {"feet": 10})
        echoed = client.call("echo", {"text": "über"})
        with pytest.raises(jsonschema.ValidationError):  # the document's schema catches it before sending
            client.call("length", {"line": {"points": [{"x": 0}]}})

    assert measured.status_code == 200, measured.text
    assert measured.json()["structured_content"] == {"length": 12.0, "segments": 3}
    assert measured.json()["server"] == "shapes"
    assert counted.json()["structured_content"] == {"result": 4}
    assert metres.json()["structured_content"] == {"result": pytest.approx(3.048)}
    assert echoed.json()["content"] == [{"type": "text", "text": "über"}]
    assert echoed.json()["text"] == "über"
    assert echoed.json()["structured_content"] == {"result": "über"}


def test_failed_calls_answer_with_an_error_status_and_what_to_do(tmp_path: Path) -> None:
    broken = {"command": sys.executable, "args": [test_server_path("exits_at_start")]}
    timed = {"basic": {**SERVERS["basic"], "timeout": 1}, "broken": broken}
    with serve_in_thread(tmp_path, None, mcp_servers=timed) as server:
        http = server.http()
        unknown = http.post("/tools/ech", json={"text": "hi"})
        invalid = http.post("/tools/add", json={"a": 1, "b": "two"})
        failed = http.post("/tools/fail", json={"message": "the disk is full"})
        timed_out = http.post("/tools/sleep", json={"ms": 60_000})
        not_json = http.post("/tools/echo", content=b'{"text": ')
        not_an_object = http.post("/tools/echo", json=["hi"])
        no_body = http.post("/tools/pid")
        wrong_method = http.get("/tools/echo")

    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "unknown_tool"
    assert "Did you mean: echo" in unknown.json()["error"]["message"]
    assert "unavailable, whose tools are not listed: broken" in unknown.json()["error"]["message"]
    assert invalid.status_code == 422
    assert invalid.json()["error"]["code"] == "invalid_arguments"
    assert "'two'" in invalid.json()["error"]["message"]
    assert failed.status_code == 502
    assert failed.json()["error"]["code"] == "server_error"
    assert "the disk is full" in failed.json()["error"]["message"]
    assert timed_out.status_code == 504
    assert timed_out.json()["error"]["code"] == "timeout"
    assert not_json.status_code == 400
    assert not_json.json()["error"]["code"] == "invalid_json"
    assert not_an_object.status_code == 400
    assert "JSON object" in not_an_object.json()["error"]["message"]
    assert no_body.status_code == 200, no_body.text
    assert wrong_method.status_code == 405


@pytest.mark.slow
def test_same_token_host_and_body_checks_as_every_route(tmp_path: Path) -> None:
    with serve_in_thread(
        tmp_path, None, token="s3cret-token", mcp_servers=SERVERS, server={"max_body_bytes": 1024}
    ) as server:
        with httpx.Client(base_url=server.url) as anonymous:
            refused = [anonymous.get("/openapi.json"), anonymous.post("/tools/echo", json={"text": "hi"})]
        http = server.http()
        document = http.get("/openapi.json").json()
        allowed = http.post("/tools/echo", json={"text": "hi"})
        other_host = http.post("/tools/echo", json={"text": "hi"}, headers={"Host": "evil.example"})
        other_origin = http.post(
            "/tools/echo", json={"text": "hi"}, headers={"Origin": "https://evil.example"}
        )
        too_large = http.post("/tools/echo", json={"text": "x" * 2000})

    assert [response.status_code for response in refused] == [401, 401]
    validate(document)
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    assert allowed.status_code == 200
    assert (other_host.status_code, other_origin.status_code, too_large.status_code) == (403, 403, 413)


def _files_config(tmp_path: Path) -> dict[str, Any]:
    return {"files": {"command": sys.executable, "args": [test_server_path("files")]}}


@pytest.mark.slow
def test_a_call_that_needs_approval_is_refused_unless_auto_approve(tmp_path: Path) -> None:
    # Nobody can be asked over HTTP: the `default` agent's approval rules decide, as on /v1.
    doomed = tmp_path / "doomed.txt"
    doomed.write_text("still here")
    agents = {"default": {"approval": {"tools": {"delete_file": "always"}}}}
    with serve_in_thread(tmp_path, None, mcp_servers=_files_config(tmp_path), agents=agents) as server:
        refused = server.http().post("/tools/delete_file", json={"path": str(doomed)})
        stats = server.http().get("/api/stats").json()
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "approval_required"
    # The refusal's one wording, as every surface gives it.
    assert refused.json()["error"]["message"] == (
        "This call to 'delete_file' needs the user's approval (the approval rule for tool 'delete_file' says "
        "'always'), and no one could be asked here, so it did not run. Tell the user what you wanted to "
        "do: they can run it where they can approve it, or allow it in the config's approval rules."
    )
    assert doomed.exists()
    (delete,) = stats
    assert (delete["tool"], delete["calls"], delete["denied"]) == ("delete_file", 1, 1)

    approving = tmp_path / "approving"
    approving.mkdir()
    with serve_in_thread(
        approving, None, mcp_servers=_files_config(tmp_path), agents=agents, server={"auto_approve": True}
    ) as server:
        deleted = server.http().post("/tools/delete_file", json={"path": str(doomed)})
    assert deleted.status_code == 200, deleted.text
    assert not doomed.exists()


def test_each_call_is_logged_as_an_openapi_call_of_the_keys_user(tmp_path: Path) -> None:
    # Refused or run, every call is in the call log once, as the caller made it.
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    agents = {"default": {"tools": {"deny": ["get_current_time"]}}}
    with serve_in_thread(tmp_path, None, agents=agents) as server:
        key = add_user(db, "reports-app")
        for tool in ("calculate", "get_current_time", "nope"):
            httpx.post(f"{server.url}/tools/{tool}", json={"expression": "2 + 2"}, headers=bearer(key))
        rows = {row["tool"]: row for row in cli_json(db, "stats", "--user", "reports-app")}
    assert {tool: row["callers"] for tool, row in rows.items()} == {
        "calculate": {"openapi": 1},
        "get_current_time": {"openapi": 1},
        "nope": {"openapi": 1},
    }
    assert (rows["calculate"]["succeeded"], rows["get_current_time"]["failed"]) == (1, 1)


def test_the_docs_curl_examples_work_as_written(tmp_path: Path) -> None:
    page = (Path(__file__).parent.parent.parent / "docs" / "tools-over-http.md").read_text(encoding="utf-8")
    commands = [line.split("  #", 1)[0].strip() for line in page.splitlines() if line.startswith("curl ")]
    assert len(commands) == 2
    with serve_in_thread(tmp_path, None) as server:
        # The one change: the port this test's server got instead of the default 8765.
        outputs = [
            subprocess.run(
                ["sh", "-c", command.replace("127.0.0.1:8765", f"127.0.0.1:{server.port}")],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
            for command in commands
        ]
    document, answer = (json.loads(output) for output in outputs)
    validate(document)
    assert "/tools/calculate" in document["paths"]
    assert answer["text"] == "42"


TOOL_FAILURES = {502: {"server_error", "cut_off"}, 503: {"server_unavailable", "cancelled"}, 504: {"timeout"}}


@pytest.fixture(scope="module")
def native_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with serve_in_thread(tmp_path_factory.mktemp("tools-fuzz"), None) as server:
        yield server.http()


@FUZZ
@given(name=st.sampled_from(["calculate", "get_current_time"]) | texts, body=st.none() | json_values)
def test_random_names_and_arguments_get_an_answer_never_a_500(
    native_tools: httpx.Client, name: str, body: Any
) -> None:
    path = "/tools/" + quote(name.encode("utf-8", "surrogatepass"), safe="")
    content = json.dumps(body, allow_nan=True).encode("utf-8", "surrogatepass") if body is not None else b""
    response = native_tools.post(path, content=content)
    if response.status_code >= 500:  # only a tool's own failure may be a 5xx, and it says which
        assert response.json()["error"]["code"] in TOOL_FAILURES.get(response.status_code, set()), (
            response.text
        )
    elif response.status_code >= 400:
        assert response.json()["error"]["message"]
    else:
        assert response.status_code == 200
        assert isinstance(response.json()["text"], str)


def test_a_client_that_hangs_up_cancels_its_call_at_the_server(tmp_path: Path) -> None:
    holds = {"holds": {"command": sys.executable, "args": [test_server_path("holds")]}}
    with serve_in_thread(tmp_path, None, mcp_servers=holds) as server:
        http = server.http()
        body = b'{"tag": "hung-up"}'
        request = (
            f"POST /tools/hold HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
            client.sendall(request)
            started = http.post("/tools/has_started", json={"tag": "hung-up"}).json()
        cancelled = http.post("/tools/was_cancelled", json={"tag": "hung-up"}).json()
        hold = _logged(http, "hold")

    assert started["structured_content"] == {"result": True}
    assert cancelled["structured_content"] == {"result": True}
    assert (hold["calls"], hold["cancelled"], hold["server"]) == (1, 1, "holds")


def _logged(http: httpx.Client, tool: str) -> dict[str, Any]:
    """The tool's stats once a call of it is in the log (written as the handler ends)."""
    deadline = time.monotonic() + 10
    while True:
        found = [row for row in http.get("/api/stats").json() if row["tool"] == tool]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no call of {tool} was logged"
        time.sleep(0.01)  # polling for the state
