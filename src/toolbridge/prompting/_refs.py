"""Walking JSON Schemas: where subschemas live, and resolving local `$ref`s without looping forever.

Everything here is pure: inputs are never mutated, outputs share no mutable values with them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

JsonSchema = dict[str, Any]

# Keywords whose value is one schema, a list of schemas, or a name -> schema map. Everything else is data
# (enum, const, default, required...) and must never be walked: a property may well be called "type".
SINGLE_SCHEMA_KEYWORDS = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
SCHEMA_MAP_KEYWORDS = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)
DEFINITION_KEYWORDS = ("$defs", "definitions")

SchemaMapper = Callable[[Any], Any]


def map_subschemas(schema: Mapping[str, Any], transform: SchemaMapper) -> JsonSchema:
    """A copy of `schema` with `transform` applied to each direct subschema (data values are deep-copied)."""
    result: JsonSchema = {}
    for key, value in schema.items():
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
            result[key] = {name: transform(sub) for name, sub in value.items()}
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            result[key] = [transform(sub) for sub in value]
        elif key in SINGLE_SCHEMA_KEYWORDS and isinstance(value, Mapping):
            result[key] = transform(value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def iter_subschemas(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The direct subschemas of `schema` (boolean schemas left out)."""
    found: list[Mapping[str, Any]] = []
    for key, value in schema.items():
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
            found.extend(sub for sub in value.values() if isinstance(sub, Mapping))
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            found.extend(sub for sub in value if isinstance(sub, Mapping))
        elif key in SINGLE_SCHEMA_KEYWORDS and isinstance(value, Mapping):
            found.append(value)
    return found


def resolve_ref(root: Mapping[str, Any], ref: str) -> Mapping[str, Any] | None:
    """The schema a local `$ref` (`#`, `#/$defs/Name`, any JSON pointer) points to, or None."""
    if not ref.startswith("#"):
        return None  # remote refs: nothing to resolve them against, offline and pure
    node: Any = root
    for raw_part in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
        part = unquote(raw_part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if isinstance(node, Mapping) else None


def ref_name(ref: str) -> str:
    """A readable name for what a ref points to: `#/$defs/TreeNode` -> `TreeNode`, `#` -> `Root`."""
    last = ref.rstrip("/").rsplit("/", 1)[-1]
    return unquote(last).replace("~1", "/").replace("~0", "~") if last not in ("", "#") else "Root"


def recursive_refs(root: Mapping[str, Any]) -> frozenset[str]:
    """The local refs whose target can reach itself again through further refs."""
    edges: dict[str, set[str]] = {}

    def refs_below(schema: Mapping[str, Any], into: set[str]) -> None:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            into.add(ref)
        for sub in iter_subschemas(schema):
            refs_below(sub, into)

    top_level: set[str] = set()
    refs_below(_without_definitions(root), top_level)
    pending = list(top_level)
    while pending:
        ref = pending.pop()
        if ref in edges:
            continue
        target = resolve_ref(root, ref)
        edges[ref] = set()
        if target is not None:
            refs_below(_without_definitions(target), edges[ref])
        pending.extend(edges[ref] - edges.keys())

    def reaches(start_ref: str, goal: str) -> bool:
        seen: set[str] = set()
        stack = list(edges.get(start_ref, ()))
        while stack:
            ref = stack.pop()
            if ref == goal:
                return True
            if ref not in seen:
                seen.add(ref)
                stack.extend(edges.get(ref, ()))
        return False

    return frozenset(ref for ref in edges if reaches(ref, ref))


def _without_definitions(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    # Definitions that nothing uses must not count as reachable.
    return {k: v for k, v in schema.items() if k not in DEFINITION_KEYWORDS}


RecursionHandler = Callable[[str, Mapping[str, Any]], JsonSchema]
"""Called with (ref, target schema) where inlining would loop; returns what to put there instead."""


def inline_refs(
    schema: Mapping[str, Any],
    on_recursion: RecursionHandler,
    *,
    root: Mapping[str, Any] | None = None,
    expanding: tuple[str, ...] = ("#",),
) -> JsonSchema:
    """A copy of `schema` with every resolvable local `$ref` replaced by its target, definitions dropped.

    Refs are resolved against `root` (default: `schema` itself). Keywords beside a `$ref` win over the
    target's (a description given at the use site is more specific). Where a ref would expand inside its
    own expansion (it is in `expanding`), `on_recursion` decides what goes there.
    """
    document = schema if root is None else root

    def expand(node: Any, active: tuple[str, ...]) -> Any:
        if not isinstance(node, Mapping):
            return copy.deepcopy(node)
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = resolve_ref(document, ref)
            if target is not None:
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                looping = ref in active
                replacement = on_recursion(ref, target) if looping else expand(target, (*active, ref))
                return {**replacement, **expand(siblings, active)}
        stripped = {k: v for k, v in node.items() if k not in DEFINITION_KEYWORDS}
        return map_subschemas(stripped, lambda sub: expand(sub, active))

    result = expand(schema, expanding)
    return result if isinstance(result, dict) else {}


def inline_refs_keeping_recursive(schema: Mapping[str, Any]) -> JsonSchema:
    """Like `inline_refs`, but recursive refs stay refs, into a fresh root `$defs` holding only those."""
    # Treating every recursive ref as already being expanded keeps each of them a ref wherever it is
    # used, so a recursive definition is written out once, in `$defs`, rather than once more inline.
    always_kept = ("#", *sorted(recursive_refs(schema)))
    def_names: dict[str, str] = {}

    def keep_ref(ref: str, _target: Mapping[str, Any]) -> JsonSchema:
        if ref in ("#", "#/"):
            return {"$ref": "#"}
        if ref not in def_names:
            name = ref_name(ref)
            while name in def_names.values():
                name += "_"
            def_names[ref] = name
        return {"$ref": f"#/$defs/{def_names[ref]}"}

    result = inline_refs(schema, keep_ref, expanding=always_kept)
    definitions: JsonSchema = {}
    while pending := [ref for ref in def_names if def_names[ref] not in definitions]:
        for ref in pending:
            target = resolve_ref(schema, ref) or {}
            definitions[def_names[ref]] = inline_refs(target, keep_ref, root=schema, expanding=always_kept)
    if definitions:
        result["$defs"] = definitions
    return result
