"""Running `toolbridge serve` for tests, in-process (uvicorn on a thread) or as a real process, on a free
127.0.0.1 port, with the scripted model behind its agents; and reading its event streams.

    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model, agents={...}) as server:
        answer = server.openai().chat.completions.create(model="default", messages=[...])
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import uvicorn
from sqlalchemy import create_engine, text

from postgres_schemas import POSTGRES_URL, schema_url
from toolbridge.config import load_config
from toolbridge.server import create_app, settings_from_config
from toolbridge.server._uvicorn import bounded_http_protocol
from toolbridge.store import Store
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

READY_TIMEOUT = 20.0
EVENT_TIMEOUT = 10.0


def read_only_database_url(schema: str) -> str:
    """A fresh, migrated `schema` of the PostgreSQL test database, as a URL whose every transaction is
    read-only (as for a role without write rights, or a standby)."""
    engine = create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    Store(schema_url(schema)).close()
    return schema_url(schema, "default_transaction_read_only=on")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


SERVING_LINE = re.compile(r"toolbridge serving on http://\S+?:(\d+)/")
"""`toolbridge serve`'s startup line (plain or inside a JSON log line), naming the port it listens on."""


def serving_port(output: str) -> int | None:
    """The port `toolbridge serve` named in its startup line within `output` (None: not started yet).

    Tests start it with `--port 0`: the server binds a free port itself, so no other process can take
    the port between choosing it and listening on it."""
    started = SERVING_LINE.search(output)
    return int(started.group(1)) if started else None


def write_config(
    directory: Path,
    model: ScriptedModelServer | None,
    *,
    agents: dict[str, Any] | None = None,
    server: dict[str, Any] | None = None,
    mcp_servers: dict[str, Any] | None = None,
    cache: dict[str, Any] | None = None,
    models: dict[str, Any] | None = None,
) -> Path:
    """A config whose default model is `model` (native tool calls over the real OpenAI protocol);
    `models` are more entries of the `models` section."""
    data: dict[str, Any] = {"mcpServers": mcp_servers or {}, "agents": agents or {}, "server": server or {}}
    if cache is not None:
        data["cache"] = cache
    if model is not None:
        data["models"] = {
            "scripted": {
                "provider": "openai",
                "model": model.model_name,
                "base_url": model.base_url,
                "api_key": "test",
                "max_retries": 0,
                "tool_mode": "native",
            }
        }
        data["default_model"] = "scripted"
    if models:
        data["models"] = {**data.get("models", {}), **models}
    path = directory / "toolbridge.json"
    path.write_text(json.dumps(data, indent=2))
    return path


@dataclass
class RunningServer:
    port: int
    token: str | None = None
    db_url: str = ""
    app: Any = None
    """The app served (in-process servers only), to read its state."""
    _clients: list[httpx.Client] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def http(self, **options: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        headers |= options.pop("headers", {})
        client = httpx.Client(base_url=self.url, headers=headers, **{"timeout": EVENT_TIMEOUT, **options})
        self._clients.append(client)
        return client

    def openai(self, **options: Any) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=f"{self.url}/v1", api_key=self.token or "unused", max_retries=0, **options
        )

    def close_clients(self) -> None:
        for client in self._clients:
            client.close()


@contextmanager
def serve_in_thread(
    directory: Path,
    model: ScriptedModelServer | None,
    *,
    token: str | None = None,
    db_url: str | None = None,
    config_path: Path | None = None,
    **config_sections: Any,
) -> Iterator[RunningServer]:
    """`create_app` under uvicorn (lifespan on) on its own thread and event loop; the store is SQLite in
    `directory` unless `db_url` says otherwise. The config is `write_config`'s for `model` and the
    sections, or the file at `config_path` as written (then with neither)."""
    if config_path is None:
        config_path = write_config(directory, model, **config_sections)
    elif model is not None or config_sections:
        raise TypeError("config_path is the whole config: give neither a model nor config sections")
    config = load_config(config_path)
    # Bound here on port 0 and handed to uvicorn: the port is ours from the start, never picked and
    # then bound later, when another process may have taken it.
    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    settings = settings_from_config(config, port=port, token=token)
    db_url = db_url or f"sqlite:///{directory / 'toolbridge.db'}"
    with Store(db_url) as store:
        app = create_app(config, store=store, settings=settings)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                http=bounded_http_protocol(),  # as `toolbridge serve` runs it
                lifespan="on",
                log_config=None,
                access_log=False,
            )
        )
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [listening]}, name=f"toolbridge-serve:{port}", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while not server.started:  # uvicorn sets it once the lifespan has started and the socket listens
            assert thread.is_alive(), "the server thread died while starting (see the log above)"
            assert time.monotonic() < deadline, f"the server did not start on port {port}"
            time.sleep(0.01)
        running = RunningServer(port=port, token=token, db_url=db_url, app=app)
        try:
            yield running
        finally:
            running.close_clients()
            server.should_exit = True
            thread.join(READY_TIMEOUT)
            listening.close()
            assert not thread.is_alive(), "the server did not stop"


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
    server: RunningServer
    startup_output: str = ""
    """What the process wrote before and with its startup line (read from its stdout to learn the port)."""

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(READY_TIMEOUT)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(READY_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.server.close_clients()


def toolbridge_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "toolbridge", *args]


def start_process(
    config: Path, db_url: str, *, port: int | None = None, token: str | None = None
) -> ServerProcess:
    """`toolbridge serve` as a real process (on a free port unless `port` is given); returns once it
    answers HTTP. Its output up to the startup line is in `startup_output`; the rest stays in its stdout."""
    args = ["serve", "--config", str(config), "--db", db_url, "--port", str(port or 0)]
    env = {**os.environ, "TOOLBRIDGE_TOKEN": ""}
    if token:
        args += ["--token", token]
    process = subprocess.Popen(
        toolbridge_command(*args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    deadline = time.monotonic() + READY_TIMEOUT
    startup = _StartupLine(process)
    if not startup.read.wait(READY_TIMEOUT):
        process.kill()
        process.wait()
        raise AssertionError(f"toolbridge serve named no port in time:\n{startup.output}")
    if startup.port is None:
        process.wait(READY_TIMEOUT)
        raise AssertionError(f"toolbridge serve exited with {process.returncode}:\n{startup.output}")
    running = ServerProcess(process, RunningServer(port=startup.port, token=token, db_url=db_url))
    running.startup_output = startup.output
    probe = running.server.http(timeout=1.0)
    while True:
        if process.poll() is not None:
            output = startup.output + (process.stdout.read() if process.stdout else "")
            raise AssertionError(f"toolbridge serve exited with {process.returncode}:\n{output}")
        try:
            if probe.get("/readyz").status_code == 200:  # public: ready with or without users
                return running
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            running.stop()
            raise AssertionError(f"toolbridge serve did not answer on port {startup.port} in time")
        time.sleep(0.05)  # polling for readiness


class _StartupLine:
    """Reads a process's stdout on a thread up to its startup line, leaving the rest to the test.

    A thread, so a server that hangs before the line cannot block the test past its deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.port: int | None = None
        self.output = ""
        self.read = threading.Event()
        """Set once the startup line was read, or the output ended without one."""
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        try:
            for line in iter(process.stdout.readline, ""):
                self.output += line
                if (port := serving_port(line)) is not None:
                    self.port = port
                    return
        finally:
            self.read.set()


class Gate:
    """A scripted model turn's `expecting`: holds the reply until released (its request is seen
    arriving first). Release it at the end of the test, so the model's thread is not left waiting."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.arrived = threading.Event()
        self.released = threading.Event()
        self._timeout = timeout

    def __call__(self, _request: object) -> bool:
        self.arrived.set()
        return self.released.wait(self._timeout)


class EventReader:
    """A chat's event stream (`GET /api/chats/{id}/events`), read one event at a time.

    Opening it waits for the `: connected` comment, so the subscription exists before the test acts."""

    def __init__(
        self, client: httpx.Client, chat_id: int, *, query: str = "", last_event_id: int | None = None
    ) -> None:
        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
        self._context = client.stream("GET", f"/api/chats/{chat_id}/events{query}", headers=headers)
        self.last_id: int | None = None
        """The `id` of the last event read (None: none had one)."""
        self.response = self._context.__enter__()
        assert self.response.status_code == 200, self.response.read()
        self._lines = self.response.iter_lines()
        assert next(self._lines) == ": connected"

    def next(self) -> dict[str, Any]:
        for line in self._lines:
            if line.startswith("id: "):
                self.last_id = int(line.removeprefix("id: "))
            elif line.startswith("data: "):
                event: dict[str, Any] = json.loads(line.removeprefix("data: "))
                return event
        raise AssertionError("the event stream ended")

    def until(self, event_type: str) -> list[dict[str, Any]]:
        """Events up to and including the first of `event_type`."""
        seen = []
        while True:
            event = self.next()
            seen.append(event)
            if event["type"] == event_type:
                return seen

    def remaining_lines(self) -> list[str]:
        """Every line still to come, until the server ends the stream."""
        return list(self._lines)

    def close(self) -> None:
        self._context.__exit__(None, None, None)

    def __enter__(self) -> EventReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def tool_result_says(text: str) -> Any:
    """A scripted turn's `expect`: the request ends with a tool result containing `text`."""

    def check(request: RecordedRequest) -> bool:
        last = request.messages[-1]
        return last["role"] == "tool" and text in str(last["content"])

    return check


def calculate_then_answer() -> list[Turn]:
    """The model calls `calculate` on 15 + 27, then answers with what it got."""
    return [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"})),
        Turn.text("The answer is 42.", expect=tool_result_says("42")),
    ]
