.PHONY: install test-servers lint typecheck test test-quick docs bench

install:
	python3 -m venv .venv && .venv/bin/pip install -q uv && .venv/bin/uv pip install -q --compile-bytecode -p .venv -e ".[dev]"

test-servers:
	scripts/install-test-servers

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check .

typecheck:
	.venv/bin/mypy

test:
	.venv/bin/pytest

test-quick:
	.venv/bin/pytest -m "not slow"

docs:
	.venv/bin/mkdocs build --strict

bench:
	.venv/bin/python bench/mcp_calls.py
	.venv/bin/python bench/parser.py
	.venv/bin/python bench/loop.py
	.venv/bin/python bench/serve.py
	.venv/bin/python bench/serve.py --passthrough
	.venv/bin/python bench/passthrough_chunks.py
	.venv/bin/python bench/serve.py --replicas 3
	.venv/bin/python bench/gateway.py
