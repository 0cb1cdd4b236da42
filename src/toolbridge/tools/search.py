"""Tool search: with many tools, the model is offered `search_tools` instead of the whole catalog, and the
tools its searches find join what it is offered (docs/tool-search.md).

    search = ToolSearch(catalog, pinned=["get_current_time"])
    search.offered()      # the pinned tools and search_tools
    await search.tool.run(call)   # search_tools(query="weather in a city") finds get_weather ...
    search.offered()      # ... which is offered from then on, after the earlier ones (never reordered)

Ranking is BM25 (Robertson's Okapi weighting) over each tool's name, title, description and parameter
names and descriptions, the name counting three times. It is written here rather than taken from a
library because the libraries that implement it bring numpy, which the small core install does not
have room for; an embedding ranker can take `ToolIndex`'s place later.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from toolbridge.tools.function import FunctionTool
from toolbridge.types import ToolSearchSetting, ToolSpec

__all__ = [
    "SEARCH_TOOL_NAME",
    "ToolIndex",
    "ToolSearch",
    "search_wanted",
]

SEARCH_TOOL_NAME = "search_tools"
AUTO_MIN_TOOLS = 41
"""`"auto"` searches from this many offered tools (more than 40) ..."""
AUTO_MIN_CATALOG_TOKENS = 10_000
"""... or from this many tokens of tool definitions, estimated at four characters a token."""
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 500
"""A longer query is cut: what a caller sends must not make one search costly."""

_K1 = 1.2
_B = 0.75
_NAME_WEIGHT = 3
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "give", "how", "i",
     "in", "into", "is", "it", "me", "my", "of", "on", "or", "please", "set", "the", "this", "to", "use",
     "what", "when", "which", "with", "you", "your"]
)  # fmt: skip


def tokens(text: str) -> list[str]:
    """Lowercase word stems: `getWeatherForecast`, `get_weather-forecast` and `weather forecasts` share
    `weather` and `forecast`; common words (`the`, `get`, `of`) are left out."""
    words = (word.lower() for word in _WORD.findall(text))
    return [_stem(word) for word in words if word not in _STOPWORDS]


def _stem(word: str) -> str:
    """A light suffix rule, enough for tool vocabularies (files/file, queries/query, listing/list)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _document(tool: ToolSpec) -> list[str]:
    words = tokens(tool.name) * _NAME_WEIGHT + tokens(tool.title or "") + tokens(tool.description)
    properties = tool.input_schema.get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            words += tokens(str(name))
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                words += tokens(schema["description"])
    return words


class ToolIndex:
    """The tools of a catalog, ranked by BM25 against a query."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self.tools = list(tools)
        self._counts = [Counter(_document(tool)) for tool in self.tools]
        self._lengths = [sum(counts.values()) for counts in self._counts]
        self._average = sum(self._lengths) / len(self._lengths) if self._lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self._counts:
            frequency.update(counts.keys())
        total = len(self.tools)
        self._idf = {word: math.log(1 + (total - n + 0.5) / (n + 0.5)) for word, n in frequency.items()}

    def search(self, query: str, limit: int = DEFAULT_LIMIT, *, skip: Iterable[str] = ()) -> list[ToolSpec]:
        """The best `limit` tools for `query` (none that share no word with it), best first; tools named
        in `skip` are left out."""
        wanted = [word for word in set(tokens(query[:MAX_QUERY_CHARS])) if word in self._idf]
        skipped = set(skip)
        scored: list[tuple[float, int]] = []
        for index, counts in enumerate(self._counts):
            if self.tools[index].name in skipped:
                continue
            score = 0.0
            length_norm = _K1 * (1 - _B + _B * self._lengths[index] / (self._average or 1))
            for word in wanted:
                count = counts.get(word, 0)
                if count:
                    score += self._idf[word] * count * (_K1 + 1) / (count + length_norm)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [self.tools[index] for _, index in scored[:limit]]


def estimated_tokens(tools: Sequence[ToolSpec]) -> int:
    """What the tools' definitions cost in a request, roughly (four characters a token)."""
    described = [{"name": t.name, "description": t.description, "parameters": t.input_schema} for t in tools]
    return len(json.dumps(described, ensure_ascii=False)) // 4


def search_wanted(setting: ToolSearchSetting, tools: Sequence[ToolSpec]) -> bool:
    """Whether a run offering `tools` searches: `"auto"` when they are many or long."""
    if setting != "auto":
        return bool(setting)
    return len(tools) >= AUTO_MIN_TOOLS or estimated_tokens(tools) >= AUTO_MIN_CATALOG_TOKENS


class ToolSearch:
    """One run's search: what its model is offered, growing with what its searches find."""

    def __init__(self, catalog: Sequence[ToolSpec], *, pinned: Iterable[str] = ()) -> None:
        pinned_names = set(pinned)
        self._pinned = [tool for tool in catalog if tool.name in pinned_names]
        self._index = ToolIndex([tool for tool in catalog if tool.name not in pinned_names])
        self._found: dict[str, ToolSpec] = {}
        self.tool = FunctionTool.from_function(self._search_tools, name=SEARCH_TOOL_NAME)

    def offered(self) -> list[ToolSpec]:
        """The pinned tools, `search_tools`, then every tool found so far in the order found: a list that
        only grows at its end, so a provider's prompt cache of the earlier part stays valid."""
        return [*self._pinned, self.tool.spec, *self._found.values()]

    async def _search_tools(self, query: str, limit: int = DEFAULT_LIMIT) -> str:
        """Find tools for a task among the many available: describe what you want to do, in a few words
        (e.g. "read a spreadsheet cell", "send an email"). The tools found can be called from your next
        step on, with the parameters listed.

        Args:
            query: What the tool should do, in plain words.
            limit: How many tools to return (1-20).
        """
        limit = max(1, min(limit, MAX_LIMIT))
        found = self._index.search(query, limit)
        if not found:
            return f"No tool matches {query!r}. Try other words for what the tool should do."
        for tool in found:
            self._found.setdefault(tool.name, tool)
        return "\n".join(["Tools found (callable from your next step):", *map(_described, found)])


def _described(tool: ToolSpec) -> str:
    """`name(param: type, optional?: type) - description`: enough to choose and call the tool."""
    properties: dict[str, Any] = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or ())
    parameters = ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_of(schema)}" for name, schema in properties.items()
    )
    description = " ".join(tool.description.split())
    return f"- {tool.name}({parameters}){f' - {description}' if description else ''}"


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(value) for value in schema["enum"][:8])
    return str(kind) if kind else "any"
