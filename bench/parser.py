"""Parser throughput, run by hand: `.venv/bin/python bench/parser.py [--quick]`.

Streams 1 MB and 10 MB of mixed output (prose, Chinese, markdown with `<` and backticks, think blocks,
hermes and fenced calls with nested JSON) through `StreamParser` in 1- and 64-character chunks and
prints throughput. Then, per dialect, the same prose with calls written in that dialect (by its own
`format_call`), read with that format: throughput, the 10 MB / 1 MB time ratio (1.0x per MB is linear),
and the time against `hermes` (the target: no family more than 2x slower). Then compares, on the same text and chunking, with the naive approach of seed 002:
append each chunk to the accumulated text and search all of it again (`contains_tool_call` +
`extract_tool_calls`). The naive way is quadratic, so it runs on smaller prefixes.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable

from toolbridge.parsing import ParseResult, StreamParser, TextDelta, ToolCallEnd, call_format, dialect_names

MB = 1_000_000

PROSE = [
    "The quarterly numbers look fine, but a < b does not hold for every region. ",
    "现在需要查看myfile.xlsx文件内容，让我先读取第一个工作表。",
    "Use `grep -r` or ``code`` spans; <b>bold</b> and <br/> tags appear in markdown too. ",
    "\n\n```python\nprint('hello')  # a fence that is not a call\n```\n\n",
    "Lists:\n- one\n- two\n- three\n",
    "读取Excel文件第一个工作表的A1到Z100范围数据。如果出现读取错误请及时反馈。\n",
]


def make_call(rng: random.Random) -> str:
    arguments = {
        "filepath": f"data/{rng.randint(1, 999)}.xlsx",
        "cells": [[rng.randint(0, 99) for _ in range(4)] for _ in range(3)],
        "note": 'braces } { and </tool_call> inside a string, "quoted", 中文',
        "options": {"preview": rng.random() < 0.5, "range": {"start": "A1", "end": "Z100"}},
    }
    if rng.random() < 0.7:
        body = {
            "id": f"call_{rng.randint(1, 999)}",
            "tool_name": "read_data_from_excel",
            "arguments": arguments,
        }
        return "\n<tool_call>\n" + json.dumps(body, ensure_ascii=False, indent=2) + "\n</tool_call>\n"
    return "\n```tool\n工具名称: calculate\n参数: " + json.dumps(arguments, ensure_ascii=False) + "\n```\n"


def make_output(size: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        roll = rng.random()
        if roll < 0.06:
            piece = make_call(rng)
        elif roll < 0.08:
            piece = "<think>" + "".join(rng.choices(PROSE, k=3)) + "</think>"
        else:
            piece = rng.choice(PROSE)
        parts.append(piece)
        length += len(piece)
    return "".join(parts)[:size]


def family_output(dialect: str, size: int, seed: int = 0) -> str:
    """Prose with about one call in twenty pieces, each written as `dialect` writes calls."""
    rng = random.Random(seed)
    writer = call_format(dialect)
    parts: list[str] = []
    length = 0
    while length < size:
        if rng.random() < 0.05:
            arguments = {
                "filepath": f"data/{rng.randint(1, 999)}.xlsx",
                "cells": [[rng.randint(0, 99) for _ in range(4)] for _ in range(3)],
                "note": "braces } { and [brackets] inside a string, 中文",
                "options": {"preview": rng.random() < 0.5, "range": {"start": "A1", "end": "Z100"}},
            }
            piece = "\n" + writer.format_call("read_data_from_excel", arguments) + "\n"
        else:
            piece = rng.choice(PROSE)
        parts.append(piece)
        length += len(piece)
    return "".join(parts)[:size]


def run_family(dialect: str) -> Callable[[list[str]], int]:
    def run(chunks: list[str]) -> int:
        parser = StreamParser(dialect)
        feed = parser.feed
        calls = 0
        for chunk in chunks:
            for event in feed(chunk):
                if type(event) is ToolCallEnd:
                    calls += 1
        return calls + sum(type(e) is ToolCallEnd for e in parser.finish())

    return run


def families(sizes: list[int]) -> None:
    small, big = sizes[0], sizes[-1]
    print(f"\nper dialect, {small / MB:g}M and {big / MB:g}M characters (CPU seconds):")
    print(f"{'dialect':<15} {'chunk':>5} {'calls':>6} {'Mchar/s':>8} {'big/small':>9} {'vs hermes':>9}")
    baseline: dict[int, float] = {}
    for dialect in ["hermes", *(name for name in dialect_names() if name != "hermes")]:
        texts = {size: family_output(dialect, size) for size in (small, big)}
        for chunk_size in (1, 64):
            run = run_family(dialect)
            calls = run(chunked(texts[small], 64))
            took = {size: timed(run, chunked(texts[size], chunk_size)) for size in (small, big)}
            baseline.setdefault(chunk_size, took[big])
            print(
                f"{dialect:<15} {chunk_size:>5} {calls:>6} {big / took[big] / MB:>8.2f} "
                f"{took[big] / took[small]:>8.1f}x {took[big] / baseline[chunk_size]:>8.2f}x"
            )


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def run_parser(chunks: list[str]) -> int:
    parser = StreamParser()
    feed = parser.feed
    calls = 0
    for chunk in chunks:
        for event in feed(chunk):
            if type(event) is ToolCallEnd:
                calls += 1
    return calls + sum(type(e) is ToolCallEnd for e in parser.finish())


_SEED_002_PATTERN = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def run_naive(chunks: list[str]) -> int:
    """Seed 002: accumulate, then look through everything accumulated, at every chunk."""
    accumulated = ""
    calls = 0
    for chunk in chunks:
        accumulated += chunk
        if "<tool_call>" in accumulated:
            calls = len(_SEED_002_PATTERN.findall(accumulated))
    return calls


def timed(function: Callable[[list[str]], int], chunks: list[str]) -> float:
    """CPU seconds: the machine may be shared, and waiting for a core is not the parser's time."""
    start = time.process_time()
    function(chunks)
    return time.process_time() - start


def run_floor(chunks: list[str]) -> int:
    """The least any parser can do per feed: one method call returning one frozen event."""

    class Floor:
        def feed(self, delta: str) -> list[TextDelta]:
            return [TextDelta(delta)]

    feed = Floor().feed
    for chunk in chunks:
        for event in feed(chunk):
            if type(event) is ToolCallEnd:
                pass
    return 0


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = [MB, 10 * MB] if not quick else [MB // 10, MB]
    texts = {size: make_output(size) for size in sizes}
    sample = texts[sizes[0]]
    result = ParseResult.from_events([*(p := StreamParser()).feed(sample), *p.finish()])
    print(
        f"corpus: {len(result.tool_calls)} calls, {len(result.errors)} errors, "
        f"{len(sample.encode()) / len(sample):.2f} UTF-8 bytes per character (sizes below are characters)"
    )
    print(f"\n{'size':>7} {'chunk':>6} {'CPU s':>8} {'Mchar/s':>8} {'MB/s utf-8':>10}")
    seconds: dict[tuple[int, int], float] = {}
    for chunk_size in (1, 64):
        for size in sizes:
            text = texts[size]
            chunks = chunked(text, chunk_size)
            took = seconds[size, chunk_size] = timed(run_parser, chunks)
            print(
                f"{size / MB:>6.1f}M {chunk_size:>6} {took:>8.2f} {size / took / MB:>8.2f} "
                f"{len(text.encode()) / took / MB:>10.2f}"
            )
    floor = timed(run_floor, chunked(texts[sizes[0]], 1))
    print(f"floor, 1-char chunks (a feed that only returns one event): {sizes[0] / floor / MB:.2f} Mchar/s")
    big, small = sizes[-1], sizes[0]
    for chunk_size in (1, 64):
        ratio = seconds[big, chunk_size] / seconds[small, chunk_size]
        print(f"{chunk_size}-char chunks: {big // small}x the text took {ratio:.1f}x the time")

    families(sizes)

    print("\nnaive re-scan of the accumulated text (seed 002), same text and chunking:")
    print(f"{'size':>7} {'chunk':>6} {'naive s':>8} {'parser s':>9} {'naive/parser':>13}  (CPU seconds)")
    for chunk_size, naive_sizes in ((1, (8_000, 32_000)), (64, (64_000, 256_000))):
        for size in naive_sizes:
            chunks = chunked(make_output(size, seed=1), chunk_size)
            naive = timed(run_naive, chunks)
            ours = timed(run_parser, chunks)
            print(f"{size / 1000:>6.0f}K {chunk_size:>6} {naive:>8.2f} {ours:>9.3f} {naive / ours:>12.1f}x")


if __name__ == "__main__":
    main()
