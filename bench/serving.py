"""What the serve benchmarks share: starting `toolbridge serve` processes for a config, on SQLite or on
a fresh PostgreSQL schema (for several replicas on one database)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from _common import free_port
from toolbridge.store import Store

POSTGRES_URL = os.environ.get(
    "TOOLBRIDGE_BENCH_POSTGRES", "postgresql+psycopg://toolbridge:toolbridge@127.0.0.1:5432/toolbridge_test"
)
"""The database of `--replicas` runs; a schema of its own is made in it and dropped afterwards."""


TOOLBRIDGE = (sys.executable, "-m", "toolbridge")


def start_server(
    config: dict[str, Any], directory: Path, db_url: str, *, launcher: Sequence[str] = TOOLBRIDGE
) -> tuple[subprocess.Popen[bytes], int]:
    """`toolbridge serve` with `config` on `db_url`, as a process; returns once it answers. `launcher` is
    the command that runs toolbridge's CLI (a profiling wrapper, say)."""
    path = directory / "toolbridge.json"
    path.write_text(json.dumps(config))
    port = free_port()
    command = [*launcher, "serve", "--config", str(path), "--port", str(port), "--db", db_url]
    process = subprocess.Popen(command, env={**os.environ, "TOOLBRIDGE_TOKEN": ""})
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                return process, port
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit("toolbridge serve did not start")
        time.sleep(0.05)  # polling for readiness


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A fresh, migrated schema in `POSTGRES_URL` (migrated once, before replicas start on it), as a
    URL; dropped afterwards."""
    schema = f"bench_{secrets.token_hex(4)}"
    engine = create_engine(POSTGRES_URL)
    try:
        with engine.begin() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
    except Exception as error:  # any driver error means the same thing here
        raise SystemExit(
            f"--replicas needs PostgreSQL: none at {POSTGRES_URL} ({error}); start one, or set "
            "TOOLBRIDGE_BENCH_POSTGRES to its URL"
        ) from error
    url = f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    try:
        Store(url).close()
        yield url
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        engine.dispose()
