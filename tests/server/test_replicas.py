"""The replica launcher (tests/server/replicas.py): three `toolbridge serve` processes on one PostgreSQL
schema, each answering on its own port and seeing what the others store."""

from __future__ import annotations

from pathlib import Path

import pytest
from replicas import start_replicas
from sqlalchemy import create_engine, text

from postgres_schemas import POSTGRES_URL
from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow


def test_three_replicas_share_one_database(tmp_path: Path) -> None:
    with ScriptedModelServer() as model, start_replicas(tmp_path, model, count=3) as fleet:
        a, b, c = fleet
        assert len({a.port, b.port, c.port}) == 3
        assert len({a.pid, b.pid, c.pid}) == 3
        created = a.http().post("/api/chats", json={"title": "made on a"})
        assert created.status_code == 201, created.text
        listed = b.http().get("/api/chats").json()
        assert [chat["title"] for chat in listed] == ["made on a"]
        assert c.http().get(f"/api/chats/{created.json()['id']}/messages").json() == []
        c.kill()
        assert not c.alive()
        assert a.http().get("/readyz").status_code == 200  # the others go on
        assert "toolbridge serving on" in b.stderr()
        b.stop()
        assert b.process.returncode == 0


def test_the_schema_is_dropped_and_every_replica_stopped_afterwards(tmp_path: Path) -> None:
    with ScriptedModelServer() as model, start_replicas(tmp_path, model, count=2) as fleet:
        schema = fleet.db_url.rsplit("%3D", 1)[1]
        processes = [replica.process for replica in fleet]
    assert all(process.poll() is not None for process in processes)
    engine = create_engine(POSTGRES_URL)
    with engine.connect() as connection:
        found = connection.execute(
            text("SELECT 1 FROM information_schema.schemata WHERE schema_name = :name"), {"name": schema}
        ).first()
    engine.dispose()
    assert found is None
