"""Tools whose schemas use what a JSON Schema may: nested models (`$defs` and `$ref`), a recursive
type, an output schema, and a name with a dot and a dash, for the OpenAPI document of `toolbridge serve`.

Run: python tests/servers/shapes.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import itertools
import math

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

READ_ONLY = mcp.ToolAnnotations(read_only_hint=True)

server = MCPServer("shapes", log_level="WARNING")


class Point(BaseModel):
    x: float
    y: float


class Polyline(BaseModel):
    points: list[Point]
    closed: bool = False


class Measure(BaseModel):
    length: float
    segments: int


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


@server.tool(annotations=READ_ONLY, title="Polyline length")
def length(line: Polyline) -> Measure:
    """The length of a polyline through `points`, back to the first one when `closed`.

    Points are in any unit; the length is in the same unit."""
    points = [*line.points, line.points[0]] if line.closed and line.points else line.points
    pairs = list(itertools.pairwise(points))
    return Measure(length=sum(math.dist((a.x, a.y), (b.x, b.y)) for a, b in pairs), segments=len(pairs))


@server.tool(annotations=READ_ONLY)
def count_nodes(tree: Tree) -> int:
    """How many nodes the tree has, its root included."""
    return 1 + sum(count_nodes(child) for child in tree.children)


@server.tool(name="units.to-metres", annotations=READ_ONLY)
def to_metres(feet: float) -> float:
    """Feet in metres."""
    return feet * 0.3048


if __name__ == "__main__":
    run(server)
