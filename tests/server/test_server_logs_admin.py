"""A server's log (`GET /api/servers/{name}/logs`) may hold any user's arguments and results: once users
exist, only admins read it; before that, this machine's one person does."""

from __future__ import annotations

import sys
from pathlib import Path

from server_helpers import serve_in_thread
from users_helpers import add_user, bearer

REPORTS = str(Path(__file__).parent.parent / "servers" / "reports.py")


def test_only_admins_read_a_servers_log_once_users_exist(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    servers = {"reports": {"command": sys.executable, "args": [REPORTS], "log_level": "info"}}
    with serve_in_thread(tmp_path, None, mcp_servers=servers) as server:
        assert server.http().get("/api/servers/reports/logs").status_code == 200  # no users yet
        user = server.http(headers=bearer(add_user(db, "alice")))
        admin = server.http(headers=bearer(add_user(db, "root", admin=True)))

        refused = user.get("/api/servers/reports/logs")
        assert refused.status_code == 403
        assert "only admins may read an MCP server's log" in refused.json()["error"]["message"]
        assert user.get("/api/servers/nobody/logs").status_code == 403  # refused before the name is looked up

        read = admin.get("/api/servers/reports/logs")
        assert read.status_code == 200
        assert [entry["text"] for entry in read.json()] == ["log level set to info"]
