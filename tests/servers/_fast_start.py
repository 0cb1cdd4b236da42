"""Starting a test server in milliseconds: a warm parent forks it, instead of a new interpreter importing
the MCP SDK (about 0.9 s of CPU per server, and the suite starts hundreds).

Every server script imports this module before anything else it imports (`import _fast_start`). When a test run has a warm parent (the
"zygote": `python tests/servers/_fast_start.py`, started by tests/conftest.py), the script's process
hands it its stdin, stdout and stderr, its arguments, environment and working directory; the zygote
forks a child that has the SDK imported already and runs the script there, on those very pipes. The
script's own process stays as the server's stand-in for whoever started it: it passes on SIGTERM and
SIGINT, and exits as the server exited (same code, or killed by the same signal). If it is killed
outright, the zygote kills the server. Without a zygote (outside the test run), the script runs as usual.

So the server is still a real process speaking MCP over real pipes; only its start is shared.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import sys
from pathlib import Path

SOCKET = Path(__file__).resolve().parent / ".run" / "zygote.sock"
_PASSED_FDS = (0, 1, 2)
_in_zygote_child = False


def delegate() -> None:
    """Run this script in a child of the zygote and exit as it does; return at once without a zygote."""
    if _in_zygote_child or "--fd" in sys.argv:  # a socket passed down by number is not handed over
        return
    if Path(sys.argv[0]).resolve().parent != SOCKET.parent.parent:
        return  # imported by something other than a server script
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(SOCKET))
    except OSError:
        return
    request = json.dumps(
        {
            "argv": sys.argv,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "script": os.path.abspath(sys.argv[0]),
        }
    ).encode()
    conn.sendmsg(
        [struct.pack("!I", len(request)), request],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", _PASSED_FDS))],
    )
    reply = _read_line(conn)
    if not reply:
        return  # the zygote went away before forking: start normally
    child = int(reply)
    # What the script's process holds of the pipes is the child's now: closing ours lets the peer see
    # the end of the output as soon as the child ends it.
    for fd in _PASSED_FDS:
        os.close(fd)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda received, _frame: _forward(child, received))
    status = _read_line(conn)
    code = int(status) if status else 1
    if code < 0:  # killed: the same way, so whoever started the server sees that
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's handler cannot be set (nor needs to be)
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _forward(child: int, received: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, received)


def _read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = conn.recv(64)
        except InterruptedError:
            continue
        if not chunk:
            return ""
        data += chunk
    return data.decode().strip()


# -- the zygote --------------------------------------------------------------------------------------


def serve() -> None:
    """Import what the servers import, then fork one child per request until told to stop."""
    import anyio  # noqa: F401  (imported here, once, for every child)
    import mcp.server.mcpserver
    import mcp.server.stdio  # noqa: F401
    import mcp_types  # noqa: F401
    import pydantic  # noqa: F401

    # The scripts import this module by its name: the one running here, so its children know they are.
    sys.modules.setdefault("_fast_start", sys.modules[__name__])
    sys.path.insert(0, str(SOCKET.parent.parent))
    import _cli  # noqa: F401

    SOCKET.parent.mkdir(exist_ok=True)
    temporary = SOCKET.with_name(f"zygote-{os.getpid()}.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(temporary))
    listener.listen(64)
    ours = os.stat(temporary).st_ino
    os.replace(temporary, SOCKET)  # in place at once, for every test worker
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    children: dict[int, socket.socket] = {}
    by_conn: dict[socket.socket, int] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wakeup_read, selectors.EVENT_READ)
    print("ready", flush=True)
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    child = _fork(conn, listener)
                    if child is not None:
                        children[child] = conn
                        by_conn[conn] = child
                        selector.register(conn, selectors.EVENT_READ)
                elif key.fileobj == wakeup_read:
                    os.read(wakeup_read, 512)
                    _reap(children, by_conn, selector)
                else:  # the script's process ended (killed): the server goes with it
                    conn = key.fileobj  # type: ignore[assignment]
                    selector.unregister(conn)
                    _forward(by_conn.pop(conn), signal.SIGKILL)
    finally:
        for child in children:
            _forward(child, signal.SIGKILL)
        if SOCKET.exists() and SOCKET.stat().st_ino == ours:  # not a newer run's
            SOCKET.unlink()


def _fork(conn: socket.socket, listener: socket.socket) -> int | None:
    fds = array.array("i")
    # The descriptors come with the message's first bytes, so the first read must be `recvmsg`.
    data, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(len(_PASSED_FDS) * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        more = conn.recv(1 << 16)
        if not more:
            for fd in fds:
                os.close(fd)
            conn.close()
            return None
        data += more
    body = data[4:]
    request = json.loads(body)
    child = os.fork()
    if child == 0:
        _become_the_server(request, list(fds), conn, listener)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{child}\n".encode())
    return child


def _become_the_server(request: dict, fds: list[int], conn: socket.socket, listener: socket.socket) -> None:
    global _in_zygote_child
    _in_zygote_child = True
    code = 1
    try:
        listener.close()
        conn.close()
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(number, signal.SIG_DFL)
        for target, fd in zip(_PASSED_FDS, fds, strict=True):
            os.dup2(fd, target)
        os.closerange(3, 4096)  # the zygote's and the other servers' sockets are none of this one's
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = request["argv"]
        sys.path[0] = os.path.dirname(request["script"])
        import random
        import runpy

        random.seed()
        runpy.run_path(request["script"], run_name="__main__")
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if not isinstance(exit_.code, int | None):
            print(exit_.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _reap(
    children: dict[int, socket.socket], by_conn: dict[socket.socket, int], selector: selectors.BaseSelector
) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if by_conn.pop(conn, None) is not None:
            selector.unregister(conn)
        with contextlib.suppress(OSError):
            conn.sendall(f"{code}\n".encode())
        conn.close()


if __name__ == "__main__":
    serve()
else:
    delegate()
