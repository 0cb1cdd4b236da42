"""Several `toolbridge serve` replicas on one PostgreSQL database, for tests: real processes, each on its
own 127.0.0.1 port (picked by the server itself, `--port 0`, and read from its startup line), all with the
same config (a scripted model over the real OpenAI wire) and a fresh schema of their own per test.

    with ScriptedModelServer(turns) as model, start_replicas(tmp_path, model, count=3) as fleet:
        a, b, c = fleet
        chat = a.http().post("/api/chats", json={}).json()
        b.kill()                                   # SIGKILL; stop() sends SIGTERM and waits
        print(c.stderr())                          # what the replica wrote so far

Leaving the block stops every replica still running (SIGTERM, then SIGKILL past a deadline) and drops
the schema.

`three_servers` starts three whole servers in this process instead (each on its own thread and event
loop, `serve_in_thread`), when a test reads their state or needs no process of its own.
"""

from __future__ import annotations

import os
import signal
import string
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import openai
from server_helpers import (
    EVENT_TIMEOUT,
    RunningServer,
    serve_in_thread,
    serving_port,
    toolbridge_command,
    write_config,
)

from postgres_schemas import postgres_schema
from toolbridge.store import Store
from toolbridge.testing import ScriptedModelServer

READY_TIMEOUT = 30.0
"""Replicas start at once and share two cores with the test: generous, and only spent on failure."""
STOP_TIMEOUT = 20.0


@dataclass
class Replica:
    """One `toolbridge serve` process of a fleet."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    token: str | None = None
    port: int = 0
    """The port it listens on, from its startup line: known once `wait_ready()` returned."""
    _log: IO[bytes] | None = None
    _clients: list[httpx.Client] = field(default_factory=list)
    _openai_clients: list[openai.OpenAI] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        assert self.port, f"replica {self.name}'s port is known once wait_ready() returned"
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def http(self, **options: Any) -> httpx.Client:
        """A client of this replica, with the fleet's token; closed when the fleet stops."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        headers |= options.pop("headers", {})
        client = httpx.Client(
            base_url=self.base_url, headers=headers, **{"timeout": EVENT_TIMEOUT, **options}
        )
        self._clients.append(client)
        return client

    def openai(self, **options: Any) -> openai.OpenAI:
        """An OpenAI client of this replica (`api_key`: the fleet's token unless given); closed with it."""
        defaults = {"base_url": f"{self.base_url}/v1", "api_key": self.token or "unused", "max_retries": 0}
        client = openai.OpenAI(**{**defaults, **options})
        self._openai_clients.append(client)
        return client

    def stderr(self) -> str:
        """What the process wrote to stderr (and stdout) so far."""
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: the replica dies mid-whatever, as on a crash or OOM kill."""
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT)

    def stop(self) -> None:
        """SIGTERM, and wait for the graceful shutdown (SIGKILL past STOP_TIMEOUT)."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def wait_ready(self, deadline: float) -> None:
        """Wait for the startup line naming its port, then poll /readyz until it answers 200 (the
        database answers, migrations current)."""
        probe: httpx.Client | None = None
        try:
            while True:
                if not self.alive():
                    raise AssertionError(
                        f"replica {self.name} exited with {self.process.returncode}:\n{self.stderr()}"
                    )
                if not self.port:
                    self.port = serving_port(self.stderr()) or 0
                if self.port:
                    probe = probe or httpx.Client(base_url=self.base_url, timeout=1.0)
                    try:
                        if probe.get("/readyz").status_code == 200:
                            return
                    except httpx.TransportError:
                        pass
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"replica {self.name} was not ready (port {self.port or 'not named'}) in time:\n"
                        f"{self.stderr()}"
                    )
                time.sleep(0.05)  # polling for the startup line and readiness, bounded by the deadline
        finally:
            if probe is not None:
                probe.close()

    def close(self) -> None:
        self.stop()
        for client in self._clients:
            client.close()
        for sdk_client in self._openai_clients:
            sdk_client.close()
        if self._log is not None:
            self._log.close()


@dataclass
class Fleet:
    """The replicas, their shared database URL and config."""

    replicas: list[Replica]
    db_url: str
    config: Path

    def __iter__(self) -> Iterator[Replica]:
        return iter(self.replicas)

    def __getitem__(self, index: int) -> Replica:
        return self.replicas[index]

    def __len__(self) -> int:
        return len(self.replicas)

    def store(self) -> Store:
        """The shared database, opened in the test's process (close it, or use it in `with`)."""
        return Store(self.db_url)


def start_replica(
    name: str, config: Path, db_url: str, log_dir: Path, *, token: str | None = None
) -> Replica:
    """One `toolbridge serve` process, started on a port it picks itself; call `wait_ready()` before
    using it (it learns the port from the startup line)."""
    args = ["serve", "--config", str(config), "--db", db_url, "--port", "0"]
    if token:
        args += ["--token", token]
    log_path = log_dir / f"replica-{name}.log"
    log = log_path.open("wb")  # a file, not a pipe: a chatty replica can never block on a full pipe
    env = {**os.environ, "TOOLBRIDGE_TOKEN": "", "TOOLBRIDGE_DB": ""}
    process = subprocess.Popen(
        toolbridge_command(*args), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
    )
    return Replica(name=name, process=process, log_path=log_path, token=token, _log=log)


@contextmanager
def start_replicas(
    directory: Path,
    model: ScriptedModelServer | None,
    *,
    count: int = 3,
    token: str | None = None,
    db_url: str | None = None,
    **config_sections: Any,
) -> Iterator[Fleet]:
    """`count` replicas on one database (a fresh PostgreSQL schema unless `db_url` names one), all ready.

    `config_sections` are those of `write_config` (agents, server, mcp_servers, cache, models)."""
    assert 1 <= count <= len(string.ascii_lowercase), "replicas are named a to z"
    config = write_config(directory, model, **config_sections)
    with ExitStack() as cleanup:
        url = db_url or cleanup.enter_context(postgres_schema("replicas"))
        replicas: list[Replica] = []
        for name in string.ascii_lowercase[:count]:  # a, b, c, ...
            replica = start_replica(name, config, url, directory, token=token)
            cleanup.callback(replica.close)
            replicas.append(replica)
        deadline = time.monotonic() + READY_TIMEOUT
        for replica in replicas:
            replica.wait_ready(deadline)
        yield Fleet(replicas, url, config)


# -- whole servers in this process (each on its own thread and event loop), to read their state ------

CAREFUL = {"default": {"approval": {"tools": {"calculate": "always"}}}}
"""Agents: the default one asks before every `calculate`."""
LEASE = {"run_lease": 1.0}
"""A server section whose lease runs out soon after its replica stops renewing it."""
CONDITION_TIMEOUT = 20.0


def three_servers(
    tmp_path: Path, model: ScriptedModelServer, url: str, stack: ExitStack, **sections: Any
) -> list[RunningServer]:
    """Three servers on the database at `url`, each with `sections` in its config too."""
    servers = []
    for name in "abc":
        (tmp_path / name).mkdir()
        server = serve_in_thread(tmp_path / name, model, db_url=url, agents=CAREFUL, server=LEASE, **sections)
        servers.append(stack.enter_context(server))
    return servers


def wait_for(condition: Any, what: str) -> None:
    """Poll `condition` until true; fail naming `what` past CONDITION_TIMEOUT."""
    deadline = time.monotonic() + CONDITION_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)  # polling a condition, bounded by the deadline
