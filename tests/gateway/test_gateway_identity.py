"""The same client scenarios run against an upstream server directly and through `toolbridge gateway`
(official SDK client, stdio) give identical results: with one server behind it, nothing is renamed.

The differences allowed are the revision's: the server's name that the 2026-07-28 revision stamps on
every result (`_meta["io.modelcontextprotocol/serverInfo"]`: through the gateway, toolbridge is the
server), and, where the upstream speaks only 2025-11-25 while the gateway's client speaks 2026-07-28, the
tools' `execution` (task support), which the newer revision does not carry.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as mcp
import pytest
from _gateway import gateway
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pydantic import BaseModel

from server_paths import PublishedServer, test_server_path

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

SERVER_INFO = "io.modelcontextprotocol/serverInfo"

Scenario = Callable[[Client], Awaitable[dict[str, Any]]]


async def _not_asked(context: Any, params: Any) -> mcp.ErrorData:
    return mcp.ErrorData(code=-1, message="not asked in these scenarios")


async def _no_roots(context: Any) -> mcp.ListRootsResult:
    return mcp.ListRootsResult(roots=[])


# The gateway offers its servers sampling, forms and roots (passing them on to its clients), and
# server-everything shows tools for those only to clients that offer them: so both clients offer them.
OFFERS: dict[str, Any] = {
    "sampling_callback": _not_asked,
    "elicitation_callback": _not_asked,
    "list_roots_callback": _no_roots,
}


def _wire(result: BaseModel) -> dict[str, Any]:
    """A result as it went over the wire, without the answering server's name."""
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    meta = dumped.pop("_meta", {})
    meta.pop(SERVER_INFO, None)
    return {**dumped, "_meta": meta} if meta else dumped


async def _every_page(list_page: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated listing (the servers' page sizes differ from the gateway's)."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await list_page(cursor)
        items.extend(_wire(item) for item in getattr(page, field))
        if not (cursor := page.next_cursor):
            return items


async def _listings(client: Client) -> dict[str, Any]:
    return {
        "tools": await _every_page(lambda cursor: client.list_tools(cursor=cursor), "tools"),
        "resources": await _every_page(lambda cursor: client.list_resources(cursor=cursor), "resources"),
        "templates": await _every_page(
            lambda cursor: client.list_resource_templates(cursor=cursor), "resource_templates"
        ),
        "prompts": await _every_page(lambda cursor: client.list_prompts(cursor=cursor), "prompts"),
    }


def _prompt_ref(name: str) -> mcp.PromptReference:
    return mcp.PromptReference(type="ref/prompt", name=name)


def _template_ref(uri_template: str) -> mcp.ResourceTemplateReference:
    return mcp.ResourceTemplateReference(type="ref/resource", uri=uri_template)


async def _everything(client: Client) -> dict[str, Any]:
    """server-everything: its deterministic tools, documents, prompts and completions."""
    seen = await _listings(client)
    calls = {
        "echo": ("echo", {"message": "hi"}),
        "sum": ("get-sum", {"a": 2, "b": 40}),
        "image": ("get-tiny-image", {}),
        "structured": ("get-structured-content", {"location": "Chicago"}),
        "links": ("get-resource-links", {"count": 3}),
        "annotated": ("get-annotated-message", {"messageType": "success", "includeImage": True}),
    }
    for key, (tool, arguments) in calls.items():
        seen[f"call {key}"] = _wire(await client.call_tool(tool, arguments))
    for resource in seen["resources"][:3]:
        seen[f"read {resource['uri']}"] = _wire(await client.read_resource(resource["uri"]))
    seen["simple prompt"] = _wire(await client.get_prompt("simple-prompt"))
    seen["args prompt"] = _wire(await client.get_prompt("args-prompt", {"city": "Oslo", "state": "Viken"}))
    seen["complete prompt"] = _wire(
        await client.complete(_prompt_ref("completable-prompt"), {"name": "department", "value": "E"})
    )
    seen["complete with context"] = _wire(
        await client.complete(
            _prompt_ref("completable-prompt"),
            {"name": "name", "value": ""},
            context_arguments={"department": "Engineering"},
        )
    )
    seen["complete template"] = _wire(
        await client.complete(
            _template_ref("demo://resource/dynamic/text/{resourceId}"), {"name": "resourceId", "value": "1"}
        )
    )
    return seen


async def _library(client: Client) -> dict[str, Any]:
    """tests/servers/library.py: listings over several pages, text and binary reads, templates, prompts
    with embedded resources, completions."""
    seen = await _listings(client)
    seen["call"] = _wire(await client.call_tool("touch", {"uri": "note://readme"}))
    for uri in [*(resource["uri"] for resource in seen["resources"]), "note://todo", "shelf://dune"]:
        seen[f"read {uri}"] = _wire(await client.read_resource(uri))
    arguments = {"review": {"code": "x = 1"}, "discuss": {"name": "todo"}, "greet": {}, "followup": {}}
    for name, given in arguments.items():
        seen[f"prompt {name}"] = _wire(await client.get_prompt(name, given))
    seen["complete prompt"] = _wire(
        await client.complete(_prompt_ref("review"), {"name": "language", "value": "r"})
    )
    seen["complete template"] = _wire(
        await client.complete(_template_ref("note://{name}"), {"name": "name", "value": "t"})
    )
    return seen


@pytest.fixture
def everything(published_server: PublishedServer) -> dict[str, Any]:
    config = published_server("server-everything")
    return {"command": config.command, "args": config.args}


@pytest.fixture
def library() -> dict[str, Any]:
    return {"command": sys.executable, "args": [test_server_path("library")]}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize(
    ("upstream", "scenario"),
    [pytest.param("everything", _everything, marks=pytest.mark.published), ("library", _library)],
)
async def test_a_client_sees_the_same_through_the_gateway_as_from_the_server_itself(
    request: pytest.FixtureRequest, tmp_path: Path, upstream: str, scenario: Scenario, mode: str
) -> None:
    server: dict[str, Any] = request.getfixturevalue(upstream)
    async with Client(StdioServerParameters(**server), mode=mode, **OFFERS) as client:
        direct = await scenario(client)
        revision = client.protocol_version
    async with Client(gateway(tmp_path, {upstream: server}, native=False), mode=mode, **OFFERS) as client:
        through = await scenario(client)
        if client.protocol_version != revision:
            assert (revision, client.protocol_version) == ("2025-11-25", "2026-07-28")
            direct["tools"] = [
                {k: v for k, v in tool.items() if k != "execution"} for tool in direct["tools"]
            ]

    assert direct.keys() == through.keys()
    for key in direct:
        assert through[key] == direct[key], key
