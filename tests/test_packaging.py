"""What the package promises to whoever installs it: types, one version, declared dependencies, and only
the MCP SDK's public modules."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import toolbridge

SRC = Path(toolbridge.__file__).resolve().parent


def _imported_top_level_modules(*, at_import_time: bool = False) -> dict[str, Path]:
    """Top-level module names imported by the package: all of them, or (`at_import_time`) only those
    imported by a module's own body, which importing toolbridge runs."""
    found: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body if at_import_time else ast.walk(tree):
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
    """Optional extras (`[postgres]`, `[otel]`) may only be imported where they are used, never when
    toolbridge itself is imported."""
    everywhere = _undeclared(_imported_top_level_modules(), _declared_distributions(extras=True))
    assert not everywhere, f"imported but in no [project] dependencies or extras: {everywhere}"
    at_import = _undeclared(_imported_top_level_modules(at_import_time=True), _declared_distributions())
    assert not at_import, f"imported with toolbridge but only in an optional extra: {at_import}"


def test_no_private_module_of_the_mcp_sdk_is_imported() -> None:
    private = {
        module
        for path in SRC.rglob("*.py")
        for module in re.findall(r"^\s*(?:from|import) (mcp\S*)", path.read_text(encoding="utf-8"), re.M)
        if any(part.startswith("_") for part in module.split(".")[1:])
    }
    assert not private
