"""`/metrics` (Prometheus' text format, read with prometheus_client's own parser) after real runs, and
the probes `/healthz` and `/readyz`."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import RunningServer, serve_in_thread
from users_helpers import add_user, bearer

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

NOTEBOOK = {
    "command": sys.executable,
    "args": [str(Path(__file__).parent.parent / "servers" / "notebook.py")],
}
READ = ToolCallSpec("read_note", {"name": "n"})


def samples(server: RunningServer) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = server.http().get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_runs_steps_tool_calls_cache_hits_and_tokens(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(READ).with_usage(10, 2),
        Turn.tool_calls(READ).with_usage(12, 2),
        Turn.tool_calls(ToolCallSpec("no_such_tool", {})).with_usage(14, 2),
        Turn.text("Done.").with_usage(16, 1),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"notebook": NOTEBOOK}, cache={"ttl": 300}) as server,
    ):
        before = samples(server)
        server.openai().chat.completions.create(
            model="default", messages=[{"role": "user", "content": "Read."}]
        )
        after = samples(server)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("toolbridge_runs_total", agent="default", stop_reason="final_answer") == 1
    assert grew("toolbridge_steps_total", agent="default") == 4
    assert grew("toolbridge_tool_calls_total", tool="read_note", server="notebook", outcome="ok") == 2
    # Counted as "(unknown)": names a model or client makes up must not each add a series.
    assert grew("toolbridge_tool_calls_total", tool="(unknown)", server="", outcome="unknown_tool") == 1
    assert grew("toolbridge_tool_cache_hits_total", tool="read_note", server="notebook") == 1
    # The one call that ran is timed; the cached one is not.
    assert grew("toolbridge_tool_call_duration_seconds_count", tool="read_note", server="notebook") == 1
    assert grew("toolbridge_model_request_duration_seconds_count", model="scripted", outcome="ok") == 4
    assert grew("toolbridge_model_tokens_total", model="scripted", type="input") == 52
    assert grew("toolbridge_model_tokens_total", model="scripted", type="output") == 7
    assert value(after, "toolbridge_active_runs") == 0
    assert value(after, "toolbridge_active_event_streams") == 0


def test_metrics_need_the_token_and_probes_do_not(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, token="s3cret") as server:
        anonymous = httpx.Client(base_url=server.url, timeout=10)
        assert anonymous.get("/metrics").status_code == 401
        assert anonymous.get("/healthz").json() == {"status": "ok"}
        assert anonymous.get("/readyz").json() == {"status": "ready"}
        assert server.http().get("/metrics").status_code == 200
        anonymous.close()


def test_with_users_metrics_are_for_admins_only(tmp_path: Path) -> None:
    """The metrics label every user's tools and agents: a user's key does not read them."""
    with serve_in_thread(tmp_path, None, token="s3cret-token-for-scrapers") as server:
        user = server.http(headers=bearer(add_user(server.db_url, "alice")))
        admin = server.http(headers=bearer(add_user(server.db_url, "root", admin=True)))
        refused = user.get("/metrics")
        assert refused.status_code == 403
        assert "only admins may read the metrics" in refused.json()["error"]["message"]
        assert admin.get("/metrics").status_code == 200
        assert server.http().get("/metrics").status_code == 200  # the token: an admin, for Prometheus


def test_readyz_fails_while_the_database_is_not_at_this_versions_schema(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None) as server:
        http = server.http()
        assert http.get("/readyz").status_code == 200
        # Another process rolled the schema back (or migrated it to a revision this version lacks).
        with sqlite3.connect(tmp_path / "toolbridge.db") as database:
            database.execute("UPDATE alembic_version SET version_num = '0002_tool_call_error_kind'")
        response = http.get("/readyz")
        assert response.status_code == 503
        assert "schema revision 0002_tool_call_error_kind" in response.json()["reason"]
        assert http.get("/healthz").status_code == 200  # alive all the same
