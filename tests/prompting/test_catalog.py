"""The tool catalog: every schema feature rendered as expected, deterministically, without looping."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbridge.prompting import render_tool, render_tool_catalog
from toolbridge.types import ToolSpec


def parameter_lines(schema: dict[str, Any]) -> list[str]:
    """The lines after `## t` for a tool with this input schema and no description."""
    return render_tool(ToolSpec(name="t", input_schema=schema)).splitlines()[1:]


def one_property(schema: dict[str, Any], *, required: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": schema}, "required": ["p"] if required else [], **extra}


# (case id, property schema, whether required, the expected line(s) for it)
PROPERTY_CASES: list[tuple[str, dict[str, Any], bool, list[str]]] = [
    ("string optional", {"type": "string"}, False, ["- p (string)"]),
    ("string required", {"type": "string"}, True, ["- p (string, required)"]),
    ("integer", {"type": "integer"}, True, ["- p (integer, required)"]),
    ("no type is any", {}, False, ["- p (any)"]),
    ("title is not shown", {"type": "string", "title": "P Title"}, False, ["- p (string)"]),
    (
        "description on one line",
        {"type": "string", "description": "Path to the\n    Excel   file"},
        True,
        ["- p (string, required): Path to the Excel file"],
    ),
    ("array of X", {"type": "array", "items": {"type": "string"}}, True, ["- p (array of string, required)"]),
    (
        "array of array",
        {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        False,
        ["- p (array of array of number)"],
    ),
    ("array without items", {"type": "array"}, False, ["- p (array)"]),
    (
        "nested object",
        {
            "type": "object",
            "description": "Style",
            "properties": {"bold": {"type": "boolean"}, "size": {"type": "integer", "minimum": 1}},
            "required": ["size"],
        },
        False,
        ["- p (object): Style", "  - bold (boolean)", "  - size (integer, required, >=1)"],
    ),
    (
        "array of objects",
        {
            "type": "array",
            "items": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        },
        True,
        ["- p (array of object, required)", "  - a (string, required)"],
    ),
    ("enum", {"type": "string", "enum": ["line", "bar"]}, True, ['- p ("line" | "bar", required)']),
    ("integer enum", {"enum": [1, 2, 3]}, False, ["- p (1 | 2 | 3)"]),
    ("const", {"const": "fast"}, False, ['- p ("fast")']),
    ("default string", {"type": "string", "default": "A1"}, False, ['- p (string, default "A1")']),
    ("default false", {"type": "boolean", "default": False}, False, ["- p (boolean, default false)"]),
    ("default list", {"type": "array", "default": []}, False, ["- p (array, default [])"]),
    ("default null is not said", {"type": "string", "default": None}, False, ["- p (string)"]),
    (
        "nullable the pydantic way",
        {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}], "default": None},
        False,
        ["- p (string | null, maxLength 5)"],
    ),
    ("nullable type list", {"type": ["integer", "null"]}, False, ["- p (integer | null)"]),
    ("type list union", {"type": ["string", "number"]}, False, ["- p (string | number)"]),
    (
        "anyOf primitives keep their facts",
        {"anyOf": [{"type": "string", "format": "date"}, {"type": "integer", "minimum": 0}]},
        False,
        ["- p (string (format date) | integer (>=0))"],
    ),
    (
        "oneOf objects become options",
        {
            "oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "integer"}}},
                {"type": "string"},
            ]
        },
        True,
        [
            "- p (object | string, required)",
            "  - option 1 (object)",
            "    - a (string, required)",
            "  - option 2 (object)",
            "    - b (integer)",
        ],
    ),
    (
        "nullable object shows its properties",
        {"anyOf": [{"type": "object", "properties": {"x": {"type": "number"}}}, {"type": "null"}]},
        False,
        ["- p (object | null)", "  - x (number)"],
    ),
    (
        "allOf is merged",
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer"}}},
            ],
            "description": "Both",
        },
        False,
        ["- p (object): Both", "  - a (string, required)", "  - b (integer)"],
    ),
    (
        "inclusive bounds",
        {"type": "integer", "minimum": 1, "maximum": 10},
        False,
        ["- p (integer, >=1, <=10)"],
    ),
    (
        "exclusive bounds",
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        False,
        ["- p (number, >0, <1)"],
    ),
    (
        "draft 4 exclusive bounds",
        {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 5},
        False,
        ["- p (number, >0, <=5)"],
    ),
    ("multipleOf", {"type": "integer", "multipleOf": 5}, False, ["- p (integer, multiple of 5)"]),
    (
        "string constraints",
        {"type": "string", "minLength": 1, "maxLength": 31, "pattern": "^[A-Z]+$", "format": "email"},
        False,
        ["- p (string, format email, minLength 1, maxLength 31, pattern ^[A-Z]+$)"],
    ),
    (
        "array constraints",
        {"type": "array", "items": {"type": "string", "pattern": "^a"}, "minItems": 1, "uniqueItems": True},
        False,
        ["- p (array of string, minItems 1, unique items, each pattern ^a)"],
    ),
    (
        "map",
        {"type": "object", "additionalProperties": {"type": "integer"}},
        False,
        ["- p (object with integer values)"],
    ),
    ("free-form object", {"type": "object", "additionalProperties": True}, False, ["- p (object)"]),
    (
        "tuple",
        {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
        False,
        ["- p ([number, number])"],
    ),
    ("deprecated", {"type": "string", "deprecated": True}, False, ["- p (string, deprecated)"]),
]


@pytest.mark.parametrize(
    ("schema", "required", "expected"), [c[1:] for c in PROPERTY_CASES], ids=[c[0] for c in PROPERTY_CASES]
)
def test_each_schema_feature_renders_as_expected(
    schema: dict[str, Any], required: bool, expected: list[str]
) -> None:
    assert parameter_lines(one_property(schema, required=required)) == ["Parameters:", *expected]


DEFS = {
    "Point": {
        "type": "object",
        "description": "A point",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    },
    "Color": {"type": "string", "enum": ["red", "green"]},
}


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ({"c": {"$ref": "#/$defs/Color"}}, ['- c ("red" | "green")']),
        (
            {"at": {"$ref": "#/$defs/Point"}},
            ["- at (object): A point", "  - x (number, required)", "  - y (number, required)"],
        ),
        (
            {"at": {"$ref": "#/$defs/Point", "description": "Where"}},
            ["- at (object): Where", "  - x (number, required)", "  - y (number, required)"],
        ),
        (
            {"path": {"type": "array", "items": {"$ref": "#/definitions/Point"}}},
            ["- path (array of object): A point", "  - x (number, required)", "  - y (number, required)"],
        ),
        ({"c": {"$ref": "#/$defs/Missing"}}, ["- c (any)"]),
    ],
    ids=["ref to enum", "ref to object", "use-site description wins", "definitions", "unresolvable ref"],
)
def test_refs_are_resolved(properties: dict[str, Any], expected: list[str]) -> None:
    schema = {"type": "object", "properties": properties, "$defs": DEFS, "definitions": DEFS}
    assert parameter_lines(schema) == ["Parameters:", *expected]


def test_a_tool_has_its_name_its_description_and_its_parameters() -> None:
    tool = ToolSpec(
        name="read_data_from_excel",
        description="\n    Read data.\n\n    Args:\n        filepath: Path\n    ",
        input_schema=one_property({"type": "string"}, required=True),
    )
    assert render_tool(tool).splitlines() == [
        "## read_data_from_excel",
        "Read data.",
        "Args:",
        "    filepath: Path",
        "Parameters:",
        "- p (string, required)",
    ]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": {}}, ["Parameters: none"]),
        ({"type": "object"}, ["Parameters: none"]),
        (
            {"type": "object", "additionalProperties": {"type": "string"}},
            ["Parameters: object with string values"],
        ),
    ],
)
def test_tools_without_named_parameters(schema: dict[str, Any], expected: list[str]) -> None:
    assert parameter_lines(schema) == expected


def test_the_title_stands_in_for_a_missing_description() -> None:
    assert render_tool(ToolSpec(name="t", title="Do a thing")).splitlines()[1] == "Do a thing"


def test_the_catalog_separates_tools_by_a_blank_line() -> None:
    tools = [ToolSpec(name="a", description="A."), ToolSpec(name="b", description="B.")]
    assert render_tool_catalog(tools) == "## a\nA.\nParameters: none\n\n## b\nB.\nParameters: none"
    assert render_tool_catalog([]) == ""


# -- recursion -------------------------------------------------------------------------------------

TREE = {
    "type": "object",
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["value"],
        }
    },
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "required": ["root"],
}
MUTUAL = {
    "type": "object",
    "$defs": {
        "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}, "n": {"type": "string"}}},
    },
    "properties": {"start": {"$ref": "#/$defs/A"}},
}
SELF_ROOT = {"type": "object", "properties": {"name": {"type": "string"}, "sub": {"$ref": "#"}}}
REF_LOOP = {
    "type": "object",
    "$defs": {"X": {"$ref": "#/$defs/X"}},
    "properties": {"x": {"$ref": "#/$defs/X"}},
}


def test_a_recursive_definition_is_named_once_and_referred_to_by_name() -> None:
    assert parameter_lines(TREE) == [
        "Parameters:",
        "- root (Node, required)",
        "  - value (integer, required)",
        "  - children (array of Node)",
    ]


def test_recursion_into_the_root_refers_to_the_parameters() -> None:
    assert parameter_lines(SELF_ROOT) == ["Parameters:", "- name (string)", "- sub (Parameters)"]


def test_mutual_recursion_stops_where_it_would_repeat() -> None:
    assert parameter_lines(MUTUAL) == [
        "Parameters:",
        "- start (A)",
        "  - b (B)",
        "    - a (A)",
        "    - n (string)",
    ]


@pytest.mark.parametrize(
    "schema", [TREE, MUTUAL, SELF_ROOT, REF_LOOP], ids=["tree", "mutual", "root", "loop"]
)
def test_recursive_schemas_render_finitely(schema: dict[str, Any]) -> None:
    text = render_tool(ToolSpec(name="t", input_schema=schema))
    assert len(text.splitlines()) < 20


def test_deep_nesting_is_cut_to_types() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(50):
        schema = {"type": "object", "properties": {"n": schema}}
    lines = parameter_lines(schema)
    assert len(lines) < 15
    assert lines[-1].strip() == "- n (object)"


# -- determinism -----------------------------------------------------------------------------------


def test_rendering_is_deterministic(corpus: list[ToolSpec]) -> None:
    assert render_tool_catalog(corpus) == render_tool_catalog([t.model_copy(deep=True) for t in corpus])


def test_rendering_does_not_depend_on_hash_seeds(corpus: list[ToolSpec]) -> None:
    script = (
        "import sys\n"
        "from tests.prompting.conftest import load_corpus\n"
        "from toolbridge.prompting import render_tool_catalog\n"
        "sys.stdout.write(render_tool_catalog(load_corpus()))\n"
    )
    outputs = set()
    for seed in ("0", "1", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env=environment,
            cwd=Path(__file__).parents[2],
        )
        outputs.add(result.stdout)
    assert outputs == {render_tool_catalog(corpus)}


def test_the_catalog_tells_everything_the_schema_says(corpus: list[ToolSpec]) -> None:
    report = render_tool(next(t for t in corpus if t.name == "build_report"))
    for expected in [
        "- sections (array of Section, required, minItems 1): A report section; sections may contain"
        " sub-sections.",
        "  - children (array of Section, default [])",
        '    - aggregation ("sum" | "mean" | "count" | "min" | "max", default "sum")',
        "- output (object, required): Where to write the report",
        '    - kind ("sheet", required)',
        "- top_n (integer | null, >=1, <=1000): Keep only the first N rows per section",
        "  - start (string, required, format date)",
    ]:
        assert expected in report.splitlines()
    assert json.dumps(report)  # plain text, nothing unserializable sneaked in
