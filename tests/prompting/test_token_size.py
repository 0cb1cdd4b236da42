"""The catalog costs fewer o200k_base tokens than the same tools as OpenAI `tools` JSON."""

from __future__ import annotations

import inspect
import json

import tiktoken

from toolbridge.prompting import openai_tool_definitions, render_tool, render_tool_catalog
from toolbridge.types import ToolSpec


def test_the_tokenizer_is_the_real_o200k_base(o200k: tiktoken.Encoding) -> None:
    # The vocabulary's sha256 is checked by tiktoken itself (and the fixture); these ids are o200k's.
    assert o200k.name == "o200k_base"
    assert o200k.n_vocab == 200019
    assert o200k.encode("hello world") == [24912, 2375]


def test_the_corpus_is_the_realistic_one(corpus: list[ToolSpec]) -> None:
    sources = {tool.source for tool in corpus}
    assert sources == {"excel", "time", "filesystem", "reports"}
    assert sum(tool.source == "excel" for tool in corpus) == 25


def test_the_catalog_is_smaller_than_openai_tools_json(
    corpus: list[ToolSpec], o200k: tiktoken.Encoding
) -> None:
    catalog_tokens = len(o200k.encode(render_tool_catalog(corpus)))
    json_tokens = len(o200k.encode(json.dumps(openai_tool_definitions(corpus))))
    assert catalog_tokens <= json_tokens
    assert catalog_tokens < json_tokens * 0.6  # measured: 2,238 against 5,865


def test_the_catalog_is_smaller_even_against_tidied_descriptions(
    corpus: list[ToolSpec], o200k: tiktoken.Encoding
) -> None:
    # Not only because the catalog strips docstring indentation: give the JSON the same tidy text.
    tidied = [t.model_copy(update={"description": inspect.cleandoc(t.description)}) for t in corpus]
    catalog_tokens = len(o200k.encode(render_tool_catalog(tidied)))
    json_tokens = len(o200k.encode(json.dumps(openai_tool_definitions(tidied))))
    assert catalog_tokens < json_tokens * 0.6


def test_every_tool_is_smaller_than_its_json(corpus: list[ToolSpec], o200k: tiktoken.Encoding) -> None:
    for tool in corpus:
        rendered = len(o200k.encode(render_tool(tool)))
        as_json = len(o200k.encode(json.dumps(openai_tool_definitions([tool]))))
        assert rendered <= as_json, tool.name
