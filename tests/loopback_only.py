"""Run a client in a network namespace of its own with loopback only, still reaching one server of ours on
127.0.0.1: proof that nothing it does leaves the machine (a connection anywhere else fails at once).

    with loopback_only(server_port, tmp_path) as wrap:
        subprocess.run(wrap(["claude", "-p", ...]), ...)

`unshare -rn` (a user namespace mapped to root, and a network namespace) runs this file, which brings
`lo` up, relays 127.0.0.1:PORT inside to a Unix socket (files cross network namespaces), then runs the
command. Outside, the Unix socket is relayed to the real server on 127.0.0.1:PORT. Where `unshare` is not
allowed (some containers), the command runs as it is, and `wrap.isolated` says so.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


@functools.cache
def namespaces_allowed() -> bool:
    try:
        probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@dataclass
class Wrapper:
    isolated: bool
    _wrap: Callable[[Sequence[str]], list[str]]

    def __call__(self, command: Sequence[str]) -> list[str]:
        return self._wrap(command)


@contextmanager
def loopback_only(port: int, tmp_path: Path) -> Iterator[Wrapper]:
    if not namespaces_allowed():
        yield Wrapper(False, list)
        return
    path = tmp_path / "loopback.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(16)
    accepting = threading.Thread(
        target=_accept_forever,
        args=(listener, lambda: socket.create_connection(("127.0.0.1", port))),
        daemon=True,
    )
    accepting.start()

    def wrap(command: Sequence[str]) -> list[str]:
        here = str(Path(__file__).resolve())
        return [
            "unshare",
            "-rn",
            sys.executable,
            here,
            "--uds",
            str(path),
            "--port",
            str(port),
            "--",
            *command,
        ]

    try:
        yield Wrapper(True, wrap)
    finally:
        listener.close()  # the accepting thread ends on its next accept


def _accept_forever(listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = connect()
        except OSError:
            client.close()
            continue
        threading.Thread(target=_relay, args=(client, upstream), daemon=True).start()


def _relay(one: socket.socket, other: socket.socket) -> None:
    """Bytes both ways until both sides have finished sending; then both are closed."""
    back = threading.Thread(target=_pump, args=(other, one), daemon=True)
    back.start()
    _pump(one, other)
    back.join()
    one.close()
    other.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _bring_loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(control, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(control, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uds", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    _bring_loopback_up()
    listener = socket.create_server(("127.0.0.1", args.port))

    def connect() -> socket.socket:
        outside = socket.socket(socket.AF_UNIX)
        outside.connect(args.uds)
        return outside

    threading.Thread(target=_accept_forever, args=(listener, connect), daemon=True).start()
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
