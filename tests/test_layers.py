"""The import picture flows one way: each package imports only the ones below it.

    types, errors → config → mcp → tools → prompting → parsing → models → agent → store → runs → gateway → server → cli

`telemetry` (spans, metrics, log context) sits beside `types` and `errors`: it imports nothing of
toolbridge, so every layer may report through it; so do `_request_guard` and `_token` (the HTTP checks
and the token setting the server and the gateway share). `parsing` imports nothing of toolbridge but the base
(`types`, `errors`: a dialect knows no prompt, no model, no loop), and the agent loop imports no parser: prompt mode lives in the models layer, as a
model wrapper.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import toolbridge

SOURCE = Path(toolbridge.__file__).parent
ORDER = [
    "types",
    "errors",
    "config",
    "mcp",
    "tools",
    "prompting",
    "parsing",
    "models",
    "agent",
    "store",
    "runs",
    "gateway",
    "server",
    "cli",
]
RANK = {name: rank for rank, name in enumerate(ORDER)} | {
    "types": 0,
    "errors": 0,
    "_values": 0,
    "_request_guard": 0,
    "_token": 0,
    "_private_file": 0,
    "_http_client": 0,
    "_aiohttp_client": 0,
    "_extras": 0,
    "_exception_groups": 0,
    "_deferred": 0,
    "_version": 0,
    "telemetry": 0,
}
TOP = {"__init__", "__main__", "testing"}
"""The package's front door, the entry point and the test kit may use any layer."""


@functools.cache
def source_nodes() -> tuple[tuple[Path, tuple[ast.AST, ...]], ...]:
    """Every module of toolbridge with its syntax nodes, parsed once per test process."""
    return tuple(
        (path, tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))) for path in SOURCE.rglob("*.py")
    )


def places_where(found: Callable[[ast.AST], bool], *, except_in: str) -> list[str]:
    """`module:line` of every node `found` accepts, outside the one module allowed to have them."""
    return [
        f"{path.relative_to(SOURCE)}:{getattr(node, 'lineno', 0)}"
        for path, nodes in source_nodes()
        if path != SOURCE / except_in
        for node in nodes
        if found(node)
    ]


def imports_by_package() -> dict[str, set[str]]:
    """For each top-level package (or module) of toolbridge, the other ones it imports, lazily or not."""
    found: dict[str, set[str]] = defaultdict(set)
    for path, nodes in source_nodes():
        package = path.relative_to(SOURCE).parts[0].removesuffix(".py")
        for node in nodes:
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            for module in modules:
                parts = module.split(".")
                if parts[0] == "toolbridge" and len(parts) > 1 and parts[1] != package:
                    found[package].add(parts[1])
    return found


def test_every_package_imports_only_the_ones_below_it() -> None:
    upward = [
        f"{package} imports {imported}"
        for package, imported_set in imports_by_package().items()
        if package not in TOP
        for imported in imported_set
        if RANK[imported] > RANK[package]
    ]
    assert upward == []


def test_telemetry_imports_nothing_of_toolbridge() -> None:
    assert imports_by_package()["telemetry"] == set()


def test_the_request_guard_and_the_token_setting_import_nothing_of_toolbridge() -> None:
    assert imports_by_package()["_request_guard"] == set()
    assert imports_by_package()["_token"] == set()


def test_parsing_imports_nothing_above_types() -> None:
    assert imports_by_package()["parsing"] <= {"types", "errors", "_values"}


def test_the_agent_imports_no_parser_and_prompt_mode_is_not_in_it() -> None:
    assert "parsing" not in imports_by_package()["agent"]
    agent_source = "\n".join(p.read_text(encoding="utf-8") for p in (SOURCE / "agent").rglob("*.py"))
    for prompt_mode_detail in (
        "<tool_call>",
        "<tool_result",
        "format_call",
        "StreamParser",
        "remember_prompt_mode",
    ):
        assert prompt_mode_detail not in agent_source


def test_no_test_module_imports_another() -> None:
    """What tests share lives in helper modules (`*_helpers.py`, `postgres_schemas.py`, ...): importing a
    test module runs its module-level setup and ties two test files together."""
    tests = Path(__file__).parent
    offenders = []
    for path in tests.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            offenders += [f"{path.relative_to(tests)}: {name}" for name in names if name.startswith("test_")]
    assert offenders == []


def test_the_name_qualifier_is_written_once() -> None:
    """`__` joins a source and a tool name; everything else uses `toolbridge.types` (`QUALIFIER`,
    `qualified_name`, `split_qualified`, `bare_name`)."""
    written = places_where(
        lambda node: isinstance(node, ast.Constant) and node.value == "__", except_in="types.py"
    )
    assert written == []


def test_exception_groups_are_read_in_one_place() -> None:
    """`toolbridge._exception_groups` reads what a task group's failure holds; nothing else opens one."""
    opened = places_where(
        lambda node: isinstance(node, ast.Attribute) and node.attr == "exceptions",
        except_in="_exception_groups.py",
    )
    assert opened == []


def test_no_module_imports_the_package_root() -> None:
    """The root imports the layers (`Agent`, the errors); a layer that imported the root would import
    itself half-made. The version comes from `toolbridge._version`."""
    importers = places_where(
        lambda node: (
            (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "toolbridge")
            or (isinstance(node, ast.Import) and any(alias.name == "toolbridge" for alias in node.names))
        ),
        except_in="__init__.py",
    )
    assert importers == []
