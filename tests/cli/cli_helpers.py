"""Running `toolbridge` in a test: in this process (`toolbridge`, `in_process`: Typer's CliRunner), for
tests about what a command does rather than about its process (a process start costs seconds of
imports), or as a real one (`toolbridge_process`, `TOOLBRIDGE`); with an environment of its own under
tmp_path (database, cache, XDG dirs; none of the developer's config or OpenAI settings; no colours, wide
lines), and config files naming our test servers.

In-process runs share this process: a test about signals, the terminal, `--verbose` logging (set up
once per process) or the entry point runs a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from toolbridge.config.model import ServerConfig

TOOLBRIDGE = [sys.executable, "-m", "toolbridge"]
StdioServer = Callable[..., ServerConfig]
DEVELOPER_SETTINGS = ("TOOLBRIDGE_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL")
"""Variables of the developer's shell that would change what a command under test does."""


def _own_settings(tmp_path: Path) -> dict[str, str | None]:
    """What `environment` changes: the test's own places under tmp_path, and no developer settings."""
    return {
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "XDG_CONFIG_HOME": str(tmp_path / "config-home"),
        "XDG_DATA_HOME": str(tmp_path / "data-home"),
        "TOOLBRIDGE_DB": f"sqlite:///{tmp_path / 'toolbridge.db'}",
        "TOOLBRIDGE_CACHE_DIR": str(tmp_path / "cache"),
    } | dict.fromkeys(DEVELOPER_SETTINGS)


def environment(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, **_own_settings(tmp_path)}
    return {name: value for name, value in env.items() if value is not None}


def toolbridge(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`toolbridge ARGS` run in this process (`in_process`), in `tmp_path` with `environment(tmp_path)`."""
    return in_process(*args, stdin=stdin, env=_own_settings(tmp_path), cwd=tmp_path)


def toolbridge_process(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`toolbridge ARGS` as a real process in `tmp_path` with `environment(tmp_path)`."""
    return subprocess.run(
        [*TOOLBRIDGE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        env=environment(tmp_path),
        cwd=tmp_path,
        check=False,
    )


def in_process(
    *args: str, stdin: str = "", env: Mapping[str, str | None] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`toolbridge ARGS` run in this process, answered like `subprocess.run`: exit code, stdout, stderr.

    `env` is set for the run (None: unset), over `NO_COLOR=1` and `COLUMNS=200`; `cwd` is the working
    directory meanwhile. An exception the command lets out is raised here (a real process would print
    its traceback)."""
    result = _invoke(args, stdin, env, cwd)
    return subprocess.CompletedProcess(
        ["toolbridge", *args], result.exit_code, stdout=result.stdout, stderr=result.stderr
    )


def in_process_bytes(
    *args: str, env: Mapping[str, str | None] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`in_process`, with what the command wrote as bytes (`--output -` of a binary resource)."""
    result = _invoke(args, "", env, cwd)
    return subprocess.CompletedProcess(
        ["toolbridge", *args], result.exit_code, stdout=result.stdout_bytes, stderr=result.stderr_bytes
    )


def only(env: Mapping[str, str]) -> dict[str, str | None]:
    """`env` as `in_process` overrides: what a process given exactly `env` would see."""
    return {**dict.fromkeys(os.environ), **env}


def _invoke(
    args: tuple[str, ...], stdin: str, env: Mapping[str, str | None] | None, cwd: Path | None
) -> Result:
    from toolbridge.cli.commands import app

    overrides: dict[str, str | None] = {"NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    with _working_directory(cwd):
        return CliRunner().invoke(app, list(args), input=stdin, env=overrides, catch_exceptions=False)


@contextmanager
def _working_directory(path: Path | None) -> Iterator[None]:
    before = Path.cwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def write_config(tmp_path: Path, document: dict[str, Any], name: str = "toolbridge.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def stdio_entry(server: ServerConfig, **extra: Any) -> dict[str, Any]:
    return {"command": server.command, "args": server.args, **extra}
