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


def _imported_top_level_modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], path)
    return found


def _declared_distributions() -> set[str]:
    requirements = importlib.metadata.requires("toolbridge") or []
    core = [r for r in requirements if "extra ==" not in r]
    return {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in core}


def test_the_package_ships_its_type_information() -> None:
    assert (SRC / "py.typed").is_file()


def test_the_version_has_one_source() -> None:
    assert importlib.metadata.version("toolbridge") == toolbridge.__version__


def test_every_third_party_import_is_a_declared_dependency() -> None:
    declared = _declared_distributions()
    providers = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, where in _imported_top_level_modules().items():
        if module == "toolbridge" or module in sys.stdlib_module_names:
            continue
        distributions = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        if not distributions & declared:
            undeclared[module] = where.relative_to(SRC)
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"


def test_no_private_module_of_the_mcp_sdk_is_imported() -> None:
    private = {
        module
        for path in SRC.rglob("*.py")
        for module in re.findall(r"^\s*(?:from|import) (mcp\S*)", path.read_text(encoding="utf-8"), re.M)
        if any(part.startswith("_") for part in module.split(".")[1:])
    }
    assert not private
