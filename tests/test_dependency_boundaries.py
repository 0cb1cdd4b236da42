"""Where toolbridge may rely on a dependency beyond its documented API: only in that SDK's adapter module
(`ADAPTERS`), each such dependency with an upper bound covering the installed version. A scan of src/
keeps every other module off those internals; test_dependency_contracts.py checks what the adapters rely
on."""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import toolbridge

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
SOURCE = Path(toolbridge.__file__).parent

ADAPTERS = {
    "_aiohttp_client.py": ("httpx2", "httpx-aiohttp", "aiohttp"),
    "mcp/_sdk.py": ("mcp",),
    "models/_openai_stream.py": ("openai",),
    "server/_uvicorn.py": ("uvicorn",),
}
"""The modules allowed to reach into a dependency, and the distributions they reach into."""

RELIED_ON = {
    "_connection",
    "_iterator",
    "_build_session",
    "_initialize",
    "_init_transport",
    "_captured_signals",
}
"""Private names the adapters use that toolbridge also gives its own objects: any use of one on an object
other than `self` is the dependency's, whatever the object."""

IMPORTED_BY_ITS_ADAPTER_ALONE = {"uvicorn": "server/_uvicorn.py"}
"""Dependencies relied on in public but undocumented methods and attributes (uvicorn: the steps of
`Server.serve`, its connection state), which the scan for private names cannot tell from documented ones:
no other module imports them."""

PINNED = ("mcp", "httpx2", "httpx-aiohttp", "aiohttp", "openai", "anthropic", "uvicorn")
"""Every distribution something is relied on in (anthropic: `x-should-retry`, models/_retry_wait.py)."""


# -- the pins ----------------------------------------------------------------------------------------


def _declared(distribution: str) -> list[str]:
    """Every requirement line for `distribution`, in the dependencies and in every extra."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    lines = [
        *project["dependencies"],
        *(line for extra in project.get("optional-dependencies", {}).values() for line in extra),
    ]
    return [
        line for line in lines if re.match(rf"{re.escape(distribution)}\s*(\[[^\]]*\])?\s*[<>=!~;]", line)
    ]


@pytest.mark.parametrize("distribution", PINNED)
def test_the_installed_version_is_within_the_checked_ones(distribution: str) -> None:
    declared = _declared(distribution)
    assert declared, f"{distribution} is not in pyproject.toml's dependencies or extras"
    installed = tuple(int(part) for part in version(distribution).split(".")[:2])
    for line in declared:
        upper = re.search(r"<\s*([\d.]+)", line)
        assert upper is not None, (
            f"{distribution} needs an upper bound in pyproject.toml (something relies on its internals: "
            f"tests/test_dependency_contracts.py), got {line!r}"
        )
        assert installed < tuple(int(part) for part in upper.group(1).split(".")[:2]), line


# -- no private use outside the adapters -------------------------------------------------------------


def _third_party(module: str) -> bool:
    top = module.split(".")[0]
    return top != "toolbridge" and top not in sys.stdlib_module_names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


class _Scan:
    """Private uses of third-party code in toolbridge's source, found without types: imports of private
    modules; private attributes of objects toolbridge does not define that name on; in a class, private
    names it reads of `self` or of `super()` that neither it nor its own bases define; and private
    methods of a third-party base class it overrides."""

    def __init__(self) -> None:
        self.own_names: set[str] = set()
        self.classes: dict[str, list[ast.ClassDef]] = {}
        self.files: list[tuple[str, dict[str, tuple[str, str | None]], list[ast.AST]]] = []
        for path in SOURCE.rglob("*.py"):
            self.own_names.add(path.stem)
            imported: dict[str, tuple[str, str | None]] = {}
            noted: list[ast.AST] = []  # imports, private attributes and classes, to look at once all is read
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute):
                    if isinstance(node.ctx, ast.Store):
                        self.own_names.add(node.attr)
                    elif _private(node.attr) and not self._on_self(node):
                        noted.append(node)
                elif isinstance(node, ast.Name):
                    if isinstance(node.ctx, ast.Store):
                        self.own_names.add(node.id)
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    self.own_names.add(node.name)
                    if isinstance(node, ast.ClassDef):
                        self.classes.setdefault(node.name, []).append(node)
                        noted.append(node)
                elif isinstance(node, ast.arg):
                    self.own_names.add(node.arg)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    if _third_party(node.module):
                        imported |= {
                            alias.asname or alias.name: (node.module, alias.name) for alias in node.names
                        }
                        noted.append(node)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if _third_party(alias.name):
                            imported[(alias.asname or alias.name).split(".")[0]] = (
                                alias.name.split(".")[0],
                                None,
                            )
                    noted.append(node)
            self.files.append((path.relative_to(SOURCE).as_posix(), imported, noted))
        self._defined: dict[int, set[str]] = {}

    def uses(self) -> list[tuple[str, int, str]]:
        found: list[tuple[str, int, str]] = []
        for where, imported, noted in self.files:
            for node in noted:
                if isinstance(node, ast.ImportFrom | ast.Import):
                    modules = (
                        [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                    )
                    found += [
                        (where, node.lineno, f"import {module}")
                        for module in modules
                        if module
                        and _third_party(module)
                        and any(_private(part) for part in module.split("."))
                    ]
                elif isinstance(node, ast.Attribute):
                    if node.attr not in self.own_names or node.attr in RELIED_ON:
                        found.append((where, node.lineno, f".{node.attr}"))
                elif isinstance(node, ast.ClassDef):
                    found += [(where, line, what) for line, what in self._class_uses(node, imported)]
        return found

    @staticmethod
    def _on_self(node: ast.Attribute) -> bool:
        receiver = node.value
        if isinstance(receiver, ast.Name):
            return receiver.id in ("self", "cls")
        return isinstance(receiver, ast.Call) and ast.unparse(receiver) == "super()"

    def _defines(self, node: ast.ClassDef) -> set[str]:
        if id(node) in self._defined:
            return self._defined[id(node)]
        names = {m.name for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
        names |= {
            m.target.id for m in node.body if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)
        }
        names |= {
            m.attr for m in ast.walk(node) if isinstance(m, ast.Attribute) and isinstance(m.ctx, ast.Store)
        }
        self._defined[id(node)] = names
        return names

    def _own_bases(self, node: ast.ClassDef, seen: frozenset[str] = frozenset()) -> list[ast.ClassDef]:
        found: list[ast.ClassDef] = []
        for base in node.bases:
            base = base.value if isinstance(base, ast.Subscript) else base
            name = base.id if isinstance(base, ast.Name) else None
            if name is not None and name not in seen:
                for defined in self.classes.get(name, []):
                    found += [defined, *self._own_bases(defined, seen | {name})]
        return found

    def _class_uses(
        self, node: ast.ClassDef, imported: dict[str, tuple[str, str | None]]
    ) -> list[tuple[int, str]]:
        inherited = set().union(*(self._defines(base) for base in self._own_bases(node)))
        mine = inherited | self._defines(node)
        found: list[tuple[int, str]] = []
        for child in ast.walk(node):
            if isinstance(child, ast.Attribute) and _private(child.attr) and self._on_self(child):
                by_super = isinstance(child.value, ast.Call)
                if child.attr not in (inherited if by_super else mine):
                    found.append(
                        (child.lineno, f"{node.name}: {'super()' if by_super else 'self'}.{child.attr}")
                    )
        overrides = [
            m.name
            for m in node.body
            if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and _private(m.name)
        ]
        for base in node.bases if overrides else []:
            base = base.value if isinstance(base, ast.Subscript) else base
            first, *rest = ast.unparse(base).split(".")
            if first not in imported:
                continue
            module, name = imported[first]
            resolved: Any = importlib.import_module(module)
            for part in ([name] if name else []) + rest:
                resolved = getattr(resolved, part)
            found += [(node.lineno, f"{node.name} overrides {m}") for m in overrides if hasattr(resolved, m)]
        return found


@functools.cache
def _scan() -> _Scan:
    return _Scan()


@functools.cache
def _private_uses() -> list[tuple[str, int, str]]:
    return _scan().uses()


def test_no_module_but_the_adapters_relies_on_a_dependencys_internals() -> None:
    outside = [use for use in _private_uses() if use[0] not in ADAPTERS]
    assert not outside, (
        "these reach into a dependency's private API outside its adapter module; move them into the "
        f"SDK's adapter ({', '.join(ADAPTERS)}) and add a test here for what they rely on: {outside}"
    )


@pytest.mark.parametrize("module", IMPORTED_BY_ITS_ADAPTER_ALONE)
def test_a_dependency_relied_on_beyond_its_documented_api_is_imported_by_its_adapter_alone(
    module: str,
) -> None:
    adapter = IMPORTED_BY_ITS_ADAPTER_ALONE[module]
    assert adapter in ADAPTERS
    importers = {
        where
        for where, imported, _noted in _scan().files
        if any(name.split(".")[0] == module for name, _ in imported.values())
    }
    assert importers == {adapter}, (
        f"{sorted(importers - {adapter})} import {module}, which toolbridge relies on beyond its documented "
        f"API: move what they use of it into {adapter}, where tests/test_dependency_contracts.py checks it"
    )


def test_the_scan_sees_what_the_adapters_rely_on() -> None:
    found = {(where, what) for where, _line, what in _private_uses()}
    for expected in [
        ("_aiohttp_client.py", "import httpx2._config"),
        ("_aiohttp_client.py", "_Connector overrides _get"),
        ("_aiohttp_client.py", "AiohttpClient overrides _init_transport"),
        ("mcp/_sdk.py", "ProbingClient overrides _build_session"),
        ("mcp/_sdk.py", "._connection"),
        ("mcp/_sdk.py", "EarlyRefresh: super()._initialize"),
        ("models/_openai_stream.py", "ChunkStream: self._iterator"),
    ]:
        assert expected in found, f"the scan no longer finds {expected}: it would miss such a use elsewhere"
