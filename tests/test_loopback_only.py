"""The `loopback_only` wrapper the real-client tests run Claude Code and Codex in: inside, our server on
127.0.0.1 answers through the relay, and nothing else is reachable: not another port of this machine's
loopback (which would be, outside the namespace), nor any other address."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from loopback_only import loopback_only, namespaces_allowed

PROBE = """
import socket, sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=10).read().decode())
for host, port in (("127.0.0.1", int(sys.argv[2])), ("192.0.2.1", 80)):
    try:
        socket.create_connection((host, port), timeout=5).close()
        print(host, "reached")
    except OSError as error:
        print(host, "unreachable:", error.errno)
"""


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from outside the namespace"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_inside_only_our_server_on_loopback_is_reachable(tmp_path: Path) -> None:
    if not namespaces_allowed():
        pytest.skip("unshare -rn is not allowed on this machine: the client tests run without a namespace")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    other = socket.create_server(("127.0.0.1", 0))  # listening on this machine's loopback, not relayed
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        with loopback_only(port, tmp_path) as wrap:
            done = subprocess.run(
                wrap([sys.executable, "-c", PROBE, str(port), str(other.getsockname()[1])]),
                capture_output=True,
                text=True,
                timeout=60,
            )
    finally:
        server.shutdown()
        server.server_close()
        other.close()
    assert wrap.isolated
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hello from outside the namespace"
    assert lines[1].startswith("127.0.0.1 unreachable")
    assert lines[2].startswith("192.0.2.1 unreachable")
