"""The tool catalog: `ToolSpec`s rendered as compact, line-based prompt text.

One tool looks like this:

    ## read_data_from_excel
    Read data from an Excel worksheet.
    Parameters:
    - filepath (string, required): Path to the Excel file
    - start_cell (string, default "A1")
    - end_cell (string | null)
    - style (object):
      - bold (boolean, default false)

It tells a model everything the schema says that helps it write a correct call (types, unions, nested
properties, enums, defaults, constraints, what is required) in fewer tokens than the JSON Schema itself:
titles, `additionalProperties: false` and other validation plumbing are left out.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolbridge.prompting._refs import recursive_refs, ref_name, resolve_ref
from toolbridge.types import ToolSpec

__all__ = ["render_tool", "render_tool_catalog"]

_INDENT = "  "
_MAX_DEPTH = 10
"""Nesting deeper than this is shown by its type only; it bounds the output of pathological schemas."""

_SHAPE_KEYWORDS = frozenset(
    {"type", "properties", "items", "prefixItems", "enum", "const", "$ref", "anyOf", "oneOf", "allOf"}
)

_STRUCTURE_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "items", "prefixItems"})


def render_tool_catalog(tools: Sequence[ToolSpec]) -> str:
    """Every tool, in the order given, separated by blank lines."""
    return "\n\n".join(render_tool(tool) for tool in tools)


def render_tool(tool: ToolSpec) -> str:
    lines = [f"## {tool.name}"]
    description = _block_text(tool.description or tool.title or "")
    if description:
        lines.append(description)
    lines.extend(_SchemaRenderer(tool.input_schema).parameter_lines())
    return "\n".join(lines)


@dataclass
class _Rendered:
    label: str
    facts: list[str]
    description: str
    children: list[str] = field(default_factory=list)
    """Lines to show one level deeper than the line of this schema (nested properties, union options)."""


@dataclass
class _Resolved:
    schema: Mapping[str, Any]
    active: tuple[str, ...]
    name: str | None = None
    """The definition's name when it is recursive, so that deeper levels can refer to it by name."""
    loops: bool = False
    """True where expanding the ref again would never end: only the name is shown."""


class _SchemaRenderer:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._recursive = recursive_refs(root)

    def parameter_lines(self) -> list[str]:
        top = self.summarize(self._root, ("#",), 0)
        if top.label == "object":
            return ["Parameters:", *top.children] if top.children else ["Parameters: none"]
        return [f"Parameters: {_with_facts(top)}", *top.children]

    def summarize(self, schema: Mapping[str, Any], active: tuple[str, ...], depth: int) -> _Rendered:
        resolved = self._resolve(schema, active)
        current, active = resolved.schema, resolved.active
        node = _Rendered("any", _facts(current), _inline_text(current.get("description")))
        if resolved.loops:
            node.label = resolved.name or "object"
            return node
        type_ = current.get("type")
        variants = current.get("anyOf") or current.get("oneOf")
        shape_only_variants = isinstance(variants, list) and all(
            isinstance(v, Mapping) and not (_SHAPE_KEYWORDS & v.keys()) for v in variants
        )
        if depth >= _MAX_DEPTH:
            node.label = type_ if isinstance(type_, str) else "any"
        elif "const" in current:
            node.label = _literal(current["const"])
        elif isinstance(current.get("enum"), list):
            node.label = " | ".join(_literal(value) for value in current["enum"])
        elif isinstance(variants, list) and variants and not (shape_only_variants and type_):
            self._render_union(node, variants, active, depth)
        elif isinstance(type_, list):
            shape = {k: v for k, v in current.items() if k in _STRUCTURE_KEYWORDS}
            typed = [{**shape, "type": t} if t != "null" else {"type": t} for t in type_]
            self._render_union(node, typed, active, depth)
        elif type_ == "object" or (type_ is None and "properties" in current):
            self._render_object(node, current, active, depth)
        elif type_ == "array" or (type_ is None and ("items" in current or "prefixItems" in current)):
            self._render_array(node, current, active, depth)
        elif isinstance(type_, str):
            node.label = type_
        if resolved.name and node.label == "object":
            node.label = resolved.name
        return node

    def _resolve(self, schema: Mapping[str, Any], active: tuple[str, ...]) -> _Resolved:
        """Follow `$ref` chains and merge `allOf`, never entering a ref that is already being expanded."""
        name = None
        while isinstance(ref := schema.get("$ref"), str):
            target = resolve_ref(self._root, ref)
            if target is None:
                break
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if ref in active:
                # `#` is the whole input schema, whose lines are headed "Parameters:".
                name = "Parameters" if ref in ("#", "#/") else ref_name(ref)
                return _Resolved(siblings, active, name, loops=True)
            if ref in self._recursive:
                name = ref_name(ref)
            active = (*active, ref)
            schema = {**target, **siblings}
        parts = schema.get("allOf")
        if isinstance(parts, list) and parts:
            merged: dict[str, Any] = {}
            for part in parts:
                if isinstance(part, Mapping):
                    _merge_into(merged, self._resolve(part, active).schema)
            _merge_into(merged, {k: v for k, v in schema.items() if k != "allOf"}, override=True)
            schema = merged
        return _Resolved(schema, active, name)

    def _render_union(
        self, node: _Rendered, variants: list[Any], active: tuple[str, ...], depth: int
    ) -> None:
        options = [self.summarize(v, active, depth) for v in variants if isinstance(v, Mapping)]
        present = [option for option in options if option.label != "null"]
        nullable = len(present) < len(options)
        if len(present) == 1:
            # `X | null` (how pydantic writes Optional[X]): X's details belong to this very line.
            only = present[0]
            node.label = only.label
            node.facts = _unique([*only.facts, *node.facts])
            node.description = node.description or only.description
            node.children = only.children
        else:
            labels = [_with_facts(option) for option in present]
            node.label = " | ".join(_unique(labels)) or "any"
            detailed = [option for option in present if option.children]
            for number, option in enumerate(detailed, start=1):
                heading = f"- option {number} ({_with_facts(option)})" if len(detailed) > 1 else None
                if heading is None:
                    node.children.extend(option.children)
                    continue
                node.children.append(heading + (f": {option.description}" if option.description else ""))
                node.children.extend(_INDENT + line for line in option.children)
        if nullable:
            node.label += " | null"

    def _render_object(
        self, node: _Rendered, schema: Mapping[str, Any], active: tuple[str, ...], depth: int
    ) -> None:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        node.label = "object"
        if isinstance(properties, Mapping) and properties:
            required = schema.get("required")
            node.children = self._property_lines(properties, required or [], active, depth + 1)
        elif isinstance(extra, Mapping) and extra:
            values = self.summarize(extra, active, depth + 1)
            node.label = f"object with {_grouped(_with_facts(values))} values"
            node.children = values.children

    def _render_array(
        self, node: _Rendered, schema: Mapping[str, Any], active: tuple[str, ...], depth: int
    ) -> None:
        items = schema.get("items")
        positional = schema.get("prefixItems", items if isinstance(items, list) else None)
        if isinstance(positional, list):
            members = [self.summarize(item, active, depth + 1) for item in positional]
            node.label = "[" + ", ".join(_with_facts(member) for member in members) + "]"
        elif isinstance(items, Mapping) and items:
            item = self.summarize(items, active, depth + 1)
            node.label = f"array of {_grouped(item.label)}"
            node.facts = [*node.facts, *(f"each {fact}" for fact in item.facts)]
            node.description = node.description or item.description
            node.children = item.children
        else:
            node.label = "array"

    def _property_lines(
        self, properties: Mapping[str, Any], required: Iterable[Any], active: tuple[str, ...], depth: int
    ) -> list[str]:
        required_names = set(required)
        lines: list[str] = []
        for name, schema in properties.items():
            if not isinstance(schema, Mapping):
                continue  # boolean schemas say nothing a model can use
            prop = self.summarize(schema, active, depth)
            details = [prop.label, *(["required"] if name in required_names else []), *prop.facts]
            line = f"- {name} ({', '.join(details)})"
            lines.append(line + (f": {prop.description}" if prop.description else ""))
            lines.extend(_INDENT + child for child in prop.children)
        return lines


def _facts(schema: Mapping[str, Any]) -> list[str]:
    """The constraints and hints of one schema worth telling a model, in a fixed order."""
    facts: list[str] = []
    if isinstance(fmt := schema.get("format"), str):
        facts.append(f"format {fmt}")
    facts.extend(_bounds(schema))
    for keyword in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
        if isinstance(schema.get(keyword), int):
            facts.append(f"{keyword} {schema[keyword]}")
    if schema.get("uniqueItems") is True:
        facts.append("unique items")
    if isinstance(pattern := schema.get("pattern"), str):
        facts.append(f"pattern {pattern}")
    if schema.get("default") is not None:
        facts.append(f"default {_literal(schema['default'])}")
    if schema.get("deprecated") is True:
        facts.append("deprecated")
    return facts


def _bounds(schema: Mapping[str, Any]) -> list[str]:
    bounds = []
    for bound, inclusive, exclusive in (("minimum", ">=", ">"), ("maximum", "<=", "<")):
        exclusive_keyword = "exclusiveMinimum" if bound == "minimum" else "exclusiveMaximum"
        exclusive_value = schema.get(exclusive_keyword)
        value = schema.get(bound)
        if _is_number(exclusive_value):
            bounds.append(f"{exclusive}{_literal(exclusive_value)}")
        elif _is_number(value):
            # Draft 4 wrote exclusive bounds as a boolean beside minimum/maximum.
            bounds.append(f"{exclusive if exclusive_value is True else inclusive}{_literal(value)}")
    if _is_number(step := schema.get("multipleOf")):
        bounds.append(f"multiple of {_literal(step)}")
    return bounds


def _merge_into(target: dict[str, Any], source: Mapping[str, Any], *, override: bool = False) -> None:
    for key, value in source.items():
        if key == "properties" and isinstance(value, Mapping):
            target["properties"] = {**target.get("properties", {}), **value}
        elif key == "required" and isinstance(value, list):
            target["required"] = _unique([*target.get("required", []), *value])
        elif override or key not in target:
            target[key] = value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _with_facts(node: _Rendered) -> str:
    return f"{node.label} ({', '.join(node.facts)})" if node.facts else node.label


def _grouped(label: str) -> str:
    return f"({label})" if " | " in label else label


def _unique(items: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def _inline_text(text: Any) -> str:
    """A description on one line: the catalog is line-based."""
    return " ".join(text.split()) if isinstance(text, str) else ""


def _block_text(text: str) -> str:
    """A tool description without indentation or blank lines, which would read as catalog structure."""
    return "\n".join(line.rstrip() for line in inspect.cleandoc(text).splitlines() if line.strip())
