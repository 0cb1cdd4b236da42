"""toolbridge's MCP client under the official conformance harness (`conformance client --command ...`).

The harness runs this with the URL of its mock server as the last argument and the scenario in
MCP_CONFORMANCE_SCENARIO (context JSON in MCP_CONFORMANCE_CONTEXT, the revision the mock speaks in
MCP_CONFORMANCE_PROTOCOL_VERSION). Each scenario is driven through toolbridge's own client, set up the
way a user sets it up: a config document naming the server's URL (parsed by toolbridge's loader), a
`ServerPool` over it, and `ClientFeatures` callbacks like the ones toolbridge's surfaces wire in.
`auth/*` scenarios belong to `auth_client.py` (the OAuth side), imported only when one runs.

Run: conformance client --command ".venv/bin/python tests/conformance/client.py" --scenario tools_call
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import mcp_types as mcp

from toolbridge.config.loader import parse_config
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.elicitation_form import ElicitationForm, FormError
from toolbridge.tools import Toolbox

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
logger = logging.getLogger("conformance-client")

SERVER = "conformance"
HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

Handler = Callable[[str], Coroutine[Any, Any, None]]
HANDLERS: dict[str, Handler] = {}


def scenario(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        HANDLERS[name] = handler
        return handler

    return register


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(raw) if raw else {}


def protocol_choice() -> str:
    """What a user would write in the config for the revision the harness speaks: the handshake-era ones
    pin "2025-11-25" (the mock of an older revision would refuse a `server/discover` probe); the rest
    leave toolbridge's default, `auto`, which finds 2026-07-28."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    return "2025-11-25" if version in HANDSHAKE_REVISIONS else "auto"


def toolbox(url: str, features: ClientFeatures | None = None) -> Toolbox:
    """The tools of one server at `url`, configured as a user writes it in toolbridge's config file, called
    the way a model's calls are (arguments checked against the tool's schema, then sent)."""
    # A connect timeout just under the suite's per-scenario one: its scenarios share CI's two cores.
    entry = {"type": "http", "url": url, "protocol": protocol_choice(), "connect_timeout": 100}
    config = parse_config({"mcpServers": {SERVER: entry}})
    return Toolbox(config, native=False, features=features or ClientFeatures(oauth=None))


# -- client features, as toolbridge's surfaces answer them -------------------------------------------


async def accept_with_defaults(_server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
    """A person who submits the form without typing anything: every field gets its default."""
    if not isinstance(params, mcp.ElicitRequestFormParams):
        return mcp.ElicitResult(action="decline")
    try:
        content = ElicitationForm.from_schema(params.requested_schema).complete({})
    except FormError:  # a required field without a default: the person would have had to type it
        return mcp.ElicitResult(action="decline")
    return mcp.ElicitResult(action="accept", content=content)


async def confirm(_server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
    return mcp.ElicitResult(action="accept", content={"confirmed": True})


async def sample(_server: str, _params: mcp.CreateMessageRequestParams) -> mcp.CreateMessageResult:
    return mcp.CreateMessageResult(
        role="assistant", content=mcp.TextContent(type="text", text=""), model="conformance"
    )


def no_roots(_server: str) -> list[mcp.Root]:
    return []


EVERY_FEATURE = ClientFeatures(sampling=sample, elicitation=accept_with_defaults, roots=no_roots, oauth=None)

# -- scenarios ---------------------------------------------------------------------------------------


async def call(tools: Toolbox, name: str, arguments: dict[str, Any]) -> None:
    result = await tools.call(name, arguments)
    logger.log(logging.WARNING if result.is_error else logging.INFO, "%s -> %s", name, result.text)


@scenario("initialize")
async def initialize(url: str) -> None:
    async with toolbox(url) as tools:
        await tools.list_tools()


@scenario("tools_call")
async def tools_call(url: str) -> None:
    async with toolbox(url) as tools:
        await tools.list_tools()
        await call(tools, "add_numbers", {"a": 5, "b": 3})


@scenario("http-standard-headers")
async def standard_headers(url: str) -> None:
    """Every kind of request that names something: each offered tool called, each resource read, each
    prompt got (the harness checks their Mcp-Method and Mcp-Name headers)."""
    async with toolbox(url) as tools:
        for tool in await tools.list_tools():
            await call(tools, tool.name, stub_arguments(tool.input_schema))
        content = tools.pool.connection(SERVER).content
        for resource in await content.list_resources():
            await content.read_resource(resource.uri)
        for prompt in await content.list_prompts():
            await content.get_prompt(prompt.name)


@scenario("request-metadata")
async def request_metadata(url: str) -> None:
    async with toolbox(url, EVERY_FEATURE) as tools:
        await tools.list_tools()
        await call(tools, "add_numbers", {"a": 5, "b": 3})


@scenario("sse-retry")
async def sse_retry(url: str) -> None:
    async with toolbox(url) as tools:
        await tools.list_tools()
        await call(tools, "test_reconnection", {})


@scenario("json-schema-ref-no-deref")
async def json_schema_ref_no_deref(url: str) -> None:
    async with toolbox(url) as tools:
        await tools.list_tools()


@scenario("json-schema-2020-12-preservation")
async def json_schema_preservation(url: str) -> None:
    """The focal tool's schema as toolbridge keeps it (what a model's schema is made from), echoed back.
    (A provider's form of it folds a root `allOf`/`anyOf`, which OpenAI and Anthropic refuse at the root.)"""
    async with toolbox(url) as tools:
        focal = next(tool for tool in await tools.list_tools() if tool.name == "json_schema_2020_12_tool")
        await call(tools, "json_schema_echo", {"schema": focal.input_schema})


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    by_type = {"string": "x", "integer": 0, "number": 0, "boolean": False, "object": {}, "array": []}
    properties = schema.get("properties", {})
    return {
        name: by_type.get(properties.get(name, {}).get("type"), "x") for name in schema.get("required", [])
    }


@scenario("http-invalid-tool-headers")
async def invalid_tool_headers(url: str) -> None:
    """Every tool toolbridge offers is called; the harness checks that the malformed ones are not offered."""
    async with toolbox(url) as tools:
        for tool in await tools.list_tools():
            await call(tools, tool.name, stub_arguments(tool.input_schema))


@scenario("http-custom-headers")
async def custom_headers(url: str) -> None:
    async with toolbox(url) as tools:
        offered = {tool.name for tool in await tools.list_tools()}
        for planned in context().get("toolCalls", []):
            if planned["name"] in offered:
                await call(tools, planned["name"], planned.get("arguments") or {})


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str) -> None:
    async with toolbox(url, ClientFeatures(elicitation=accept_with_defaults, oauth=None)) as tools:
        await tools.list_tools()
        await call(tools, "test_client_elicitation_defaults", {})


@scenario("sep-2322-client-request-state")
async def request_state(url: str) -> None:
    async with toolbox(url, ClientFeatures(elicitation=confirm, oauth=None)) as tools:
        await tools.list_tools()
        for name in (
            "test_mrtr_echo_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_state",
            "test_mrtr_no_result_type",
        ):
            await call(tools, name, {})


async def run_auth(url: str, name: str) -> None:
    """`auth/*`: the OAuth side's client (`auth_client.py`), next to this file."""
    sys.path.insert(0, str(Path(__file__).parent))
    from auth_client import run  # type: ignore[import-not-found]

    await run(url, name, context())


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)")
    url, name = sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    logger.info("scenario %r at %s, protocol %s", name, url, protocol_choice())
    if name.startswith("auth/"):
        asyncio.run(run_auth(url, name))
    elif name in HANDLERS:
        asyncio.run(HANDLERS[name](url))
    else:
        sys.exit(f"unknown scenario {name!r}; known: {', '.join(sorted(HANDLERS))}, auth/*")


if __name__ == "__main__":
    main()
