"""Test servers started in child processes on a port bound here: the parent binds port 0, reads the
port back and passes the listening socket down (`--fd`, tests/servers/_cli.py), so no other process can
take the port between its choice and its use."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence

import httpx

READY_TIMEOUT = 20.0


def start_listening_process(
    command: Sequence[str], what: str, *, port: int = 0
) -> tuple[subprocess.Popen[bytes], int]:
    """Run `command` with `--port P --fd N` (a socket bound here on `port`, 0: any free one); return the
    process and its port once it answers HTTP. `what` names it in failures."""
    with socket.create_server(("127.0.0.1", port)) as listening:
        port = listening.getsockname()[1]
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server process
        process = subprocess.Popen(
            [*command, "--port", str(port), "--fd", str(listening.fileno())],
            pass_fds=[listening.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    # The socket listens from the start, so a connection proves nothing: wait for an HTTP answer (any).
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        if process.poll() is not None:
            stderr.seek(0)
            raise AssertionError(f"{what} exited early:\n{stderr.read().decode()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
            return process, port
        except httpx.TransportError:
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise AssertionError(f"{what} did not answer on port {port} in time") from None
