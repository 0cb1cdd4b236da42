"""What the package promises to whoever installs it: types, one version, declared dependencies, only the
MCP SDK's public modules, a small core, and extras whose absence says what to install.

An extra's absence is simulated in a child process by an import hook that makes its modules unimportable
(as they are when not installed); the `slow` test resolves the real install in a fresh venv."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import toolbridge
from toolbridge._extras import EXTRA_MODULES

SRC = Path(toolbridge.__file__).resolve().parent


def _imported_top_level_modules() -> dict[str, Path]:
    """Top-level module names imported by the package."""
    found: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], path)
    return found


def _declared_distributions(*, extras: bool = False) -> set[str]:
    requirements = importlib.metadata.requires("toolbridge") or []
    wanted = [r for r in requirements if extras or "extra ==" not in r]
    return {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in wanted}


def _undeclared(modules: dict[str, Path], declared: set[str]) -> dict[str, Path]:
    providers = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, where in modules.items():
        if module == "toolbridge" or module in sys.stdlib_module_names:
            continue
        distributions = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        if not distributions & declared:
            undeclared[module] = where.relative_to(SRC)
    return undeclared


def test_the_package_ships_its_type_information() -> None:
    assert (SRC / "py.typed").is_file()


def test_the_version_has_one_source() -> None:
    assert importlib.metadata.version("toolbridge") == toolbridge.__version__


def test_every_third_party_import_is_a_declared_dependency() -> None:
    """(That the core runs without the extras is what the tests below check, in a process without them.)"""
    everywhere = _undeclared(_imported_top_level_modules(), _declared_distributions(extras=True))
    assert not everywhere, f"imported but in no [project] dependencies or extras: {everywhere}"


def test_no_private_module_of_the_mcp_sdk_is_imported() -> None:
    private = {
        module
        for path in SRC.rglob("*.py")
        for module in re.findall(r"^\s*(?:from|import) (mcp\S*)", path.read_text(encoding="utf-8"), re.M)
        if any(part.startswith("_") for part in module.split(".")[1:])
    }
    assert not private


PYPROJECT = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]

_WITHOUT = """
import importlib.abc, sys
class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == gone or name.startswith(gone + ".") for gone in {gone!r}):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""
"""Run first in the child: the named modules (and their submodules) cannot be imported, as when their
distributions are not installed."""

NO_EXTRAS = sorted({module for modules in EXTRA_MODULES.values() for module in modules} | {"httpx", "uvloop"})
"""Every module an extra brings (httpx: httpx-aiohttp's; uvloop: fast-http's), none of which the core may
need."""


def _run_without(
    gone: list[str], code: str, *, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT.format(gone=gone) + code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def _cli_without(
    gone: list[str], *arguments: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    code = f"import sys; sys.argv = ['toolbridge', *{list(arguments)!r}]; from toolbridge.cli import main; main()"
    return _run_without(gone, code, env=env)


def _assert_names_the_extra(done: subprocess.CompletedProcess[str], extra: str) -> None:
    assert done.returncode == 1, done.stderr
    assert f"pip install 'toolbridge[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_extras_modules_are_what_their_distributions_provide() -> None:
    """`toolbridge._extras.EXTRA_MODULES` (what a missing extra is detected by) against pyproject.toml."""
    providers = importlib.metadata.packages_distributions()

    def distributions(extra: str) -> set[str]:
        found = set()
        for requirement in EXTRAS[extra]:
            name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()
            if name == "toolbridge":
                included = re.search(r"\[(.*)\]", requirement)
                assert included
                found |= {d for part in included.group(1).split(",") for d in distributions(part.strip())}
            else:
                found.add(name.replace("_", "-"))
        return found

    for extra, modules in EXTRA_MODULES.items():
        for module in modules:
            provided = {d.lower().replace("_", "-") for d in providers[module.split(".")[0]]}
            assert provided & distributions(extra), f"{module} comes with no distribution of [{extra}]"
    assert set(EXTRA_MODULES) | {"all", "dev"} == set(EXTRAS)
    assert distributions("all") == {d for extra in EXTRA_MODULES for d in distributions(extra)}
    assert distributions("all") <= distributions("dev"), "CI installs .[dev]: it must test every extra"


def test_the_core_runs_an_agent_and_asks_the_demo_model_without_any_extra(tmp_path: Path) -> None:
    code = """
import asyncio
import toolbridge
from toolbridge._http_client import async_http_client
from toolbridge.models import DemoModel

async def main():
    async with toolbridge.Agent(DemoModel()) as agent:
        result = await agent.run("What is 15 + 27?")
    async with async_http_client() as client:
        print(result.output, type(client).__module__, sep="\\n")

asyncio.run(main())
"""
    done = _run_without(NO_EXTRAS, code)
    assert done.returncode == 0, done.stderr
    answer, client = done.stdout.splitlines()[-2:]
    assert "42" in answer
    assert client == "httpx2"  # without fast-http: httpx2's own transport

    done = _cli_without(NO_EXTRAS, "ask", "--model", "demo", "What is 15 + 27?")
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout
    # No history kept, and no word about it: stderr holds the tool-call lines only (stdout is a pipe).
    assert [line[:1] for line in done.stderr.splitlines()] == ["→", "✓"], done.stderr
    assert not list(Path.home().rglob("toolbridge.db"))  # (HOME is the test session's own)


def test_the_command_line_lists_every_command_without_any_extra() -> None:
    done = _cli_without(NO_EXTRAS, "--help")
    assert done.returncode == 0, done.stderr
    assert "serve" in done.stdout
    assert "history" in done.stdout


@pytest.mark.parametrize(
    ("gone", "arguments", "extra"),
    [
        (["openai"], ["ask", "--model", "openai:gpt-4o-mini", "hi"], "openai"),
        (["openai"], ["ask", "--model", "ollama:qwen3", "hi"], "openai"),
        (["anthropic"], ["ask", "--model", "anthropic:claude-sonnet-4-5", "hi"], "anthropic"),
        (["fastapi"], ["serve"], "serve"),
        (["prometheus_client"], ["serve"], "serve"),
        (["prometheus_client"], ["gateway"], "gateway"),
        (["httptools"], ["gateway", "--http"], "gateway"),
        (["sqlalchemy", "alembic"], ["history"], "store"),
        (["sqlalchemy", "alembic"], ["stats"], "store"),
        (["sqlalchemy", "alembic"], ["chat", "--resume"], "store"),
        (["sqlalchemy", "alembic"], ["ask", "--db", "chats.db", "--model", "demo", "hi"], "store"),
        (["psycopg"], ["history", "--db", "postgresql+psycopg://user:secret@127.0.0.1:9/chats"], "postgres"),
    ],
)
def test_a_missing_extra_is_an_error_naming_its_pip_line(
    gone: list[str], arguments: list[str], extra: str
) -> None:
    _assert_names_the_extra(_cli_without(gone, *arguments), extra)


def test_the_gateway_serves_http_without_fastapi(tmp_path: Path) -> None:
    """The gateway extra brings Starlette and uvicorn, not FastAPI (the serve extra's): its HTTP app and
    the runner it is served on import without it."""
    config = tmp_path / "toolbridge.json"
    config.write_text('{"mcpServers": {}}', encoding="utf-8")
    code = f"""
from starlette.testclient import TestClient
from toolbridge.config import load_config
from toolbridge.gateway.configured import GatewaySetup
from toolbridge.gateway.http import HttpSettings, http_app
from toolbridge.server import listen, run_server

setup = GatewaySetup.of(load_config({str(config)!r}), None, native=False)
app = http_app(setup.build(), HttpSettings())
with TestClient(app, base_url="http://127.0.0.1:8766") as client:
    print(client.get("/metrics").status_code)
print("fastapi" in sys.modules)
"""
    done = _run_without(["fastapi"], "import sys\n" + code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["200", "False"]


def test_exporting_traces_without_the_otel_extra_names_it() -> None:
    done = _cli_without(
        ["opentelemetry.sdk", "opentelemetry.exporter"],
        *["ask", "--model", "demo", "hi"],
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
    )
    _assert_names_the_extra(done, "otel")


def test_code_mode_without_the_code_extra_names_it() -> None:
    code = """
import asyncio
from toolbridge import Agent
from toolbridge.agent import AgentDefinition
from toolbridge.models import DemoModel

agent = Agent(DemoModel(), definition=AgentDefinition(tool_mode="code"))
asyncio.run(agent.run("What is 15 + 27?"))
"""
    done = _run_without(["pydantic_monty"], code)
    assert "MissingExtraError" in done.stderr
    assert "pip install 'toolbridge[code]'" in done.stderr


def test_the_library_names_the_extra_a_model_class_needs() -> None:
    done = _run_without(["anthropic"], "import toolbridge.models as m; m.AnthropicModel")
    assert "MissingExtraError" in done.stderr
    assert "pip install 'toolbridge[anthropic]'" in done.stderr


def test_the_test_kit_works_without_any_extra() -> None:
    code = """
import sys
from toolbridge.testing import FunctionModel, Turn

print(sorted(m for m in ("uvicorn", "starlette", "toolbridge.server") if m in sys.modules))

import httpx2
from toolbridge import Agent
from toolbridge.errors import MissingExtraError

model = FunctionModel.replying("It is 42.")
print(Agent(model).run_sync("What is 15 + 27?").output)

from toolbridge.testing import ScriptedModelServer

with ScriptedModelServer([Turn.text("Served.")]) as server:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    reply = httpx2.post(f"{server.base_url}/chat/completions", json=body).json()
    print(reply["choices"][0]["message"]["content"])
    try:
        server.openai_client()
    except MissingExtraError as error:
        print(error)
"""
    done = _run_without(NO_EXTRAS, code)
    assert done.returncode == 0, done.stderr
    loaded, answer, served, missing = done.stdout.splitlines()
    assert loaded == "[]"  # the servers (and uvicorn) wait until one is asked for
    assert answer == "It is 42."
    assert served == "Served."
    assert "pip install 'toolbridge[openai]'" in missing


def _resolve(extra: str | None = None) -> set[str]:
    """The distributions `pip install toolbridge[extra]` brings into a fresh venv: resolved by uv (which
    the README's install command puts in the venv) against PyPI, as pip would, in a second instead of
    the minute pip's dry run takes."""
    uv = Path(sys.executable).with_name("uv")
    assert uv.exists(), f"{uv} is missing: install with the README's test command (it installs uv)"
    command = [str(uv), "pip", "compile", "-q", "--no-header", "--no-annotate", "-p", sys.executable]
    done = subprocess.run(
        [*command, *(["--extra", extra] if extra else []), "pyproject.toml"],
        capture_output=True, text=True, check=True, cwd=SRC.parents[1], timeout=300,
    )  # fmt: skip
    return {line.split("==")[0].lower().replace("_", "-") for line in done.stdout.split() if "==" in line}


@pytest.mark.timeout(300)
def test_a_fresh_venv_installs_a_small_core_and_all_of_everything() -> None:
    core = _resolve()
    assert len(core) <= 40, sorted(core)
    assert not {"fastapi", "sqlalchemy", "openai", "anthropic", "prometheus-client", "aiohttp"} & core
    everything = _resolve("all")
    wanted = {"fastapi", "sqlalchemy", "alembic", "openai", "anthropic", "prometheus-client", "aiohttp",
              "httpx-aiohttp", "httptools", "psycopg", "opentelemetry-sdk", "python-json-logger"}  # fmt: skip
    assert wanted <= everything
    assert core <= everything
