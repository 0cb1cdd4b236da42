"""toolbridge's MCP client under the official conformance harness (`conformance client --command ...`).

The harness starts a mock server for one scenario and runs this script with the server's URL as the last
argument and the scenario in `MCP_CONFORMANCE_SCENARIO` (its inputs, such as client credentials, in
`MCP_CONFORMANCE_CONTEXT`; the revision it speaks in `MCP_CONFORMANCE_PROTOCOL_VERSION`). Each scenario
is played the way a toolbridge user would meet it: a server entry in the `mcpServers` form, connected by
a `Toolbox` (the path a model's calls take: names resolved, arguments checked against the tool's schema),
with the answers to a server's questions given as `ClientFeatures`. The browser step
of a sign-in follows the authorization server's redirect instead of a person (the harness's mock grants
at once). It lives among the test servers for their fast start; tests/conformance/ runs the suite.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import _fast_start  # noqa: F401  # first: in a test run, a warm parent with the SDK imported runs this
import anyio
import httpx2
import mcp_types as mcp

from toolbridge.config import Config
from toolbridge.config._servers import parse_server
from toolbridge.errors import ConfigError
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import AuthorizationCodeResult, FileTokenStore, OAuth
from toolbridge.tools import Toolbox

Scenario = Callable[[str], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}
CONTEXT: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
REVISION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")

log = logging.getLogger("conformance")


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(play: Scenario) -> Scenario:
        SCENARIOS.update(dict.fromkeys(names, play))
        return play

    return register


def server_entry(url: str, **entry: Any) -> dict[str, Any]:
    """The `mcpServers` entry a user would write for the harness's server."""
    # The suite's scenarios run at once and share the machine's cores: a connect may wait for CPU.
    entry = {"url": url, "type": "http", "connect_timeout": 100, **entry}
    if REVISION is not None and REVISION < "2026-07-28":
        entry.setdefault("protocol", "2025-11-25")
    return entry


async def sign_in_by_redirect(_server: str, authorization_url: str) -> AuthorizationCodeResult:
    """The browser step, done by following the authorization endpoint's redirect to our callback."""
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.get(authorization_url, follow_redirects=False)
    location = response.headers.get("location")
    if not location:
        raise RuntimeError(f"expected a redirect from {authorization_url}, got HTTP {response.status_code}")
    query = parse_qs(urlsplit(location).query)
    first = {key: values[0] for key, values in query.items()}
    return AuthorizationCodeResult(code=first["code"], state=first.get("state"), iss=first.get("iss"))


async def accept_with_defaults(_server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
    """Accept a form with each field's default (SEP-1034), as a person pressing Submit would."""
    content: dict[str, Any] = {}
    if isinstance(params, mcp.ElicitRequestFormParams):
        for name, field in params.requested_schema.get("properties", {}).items():
            if "default" in field:
                content[name] = field["default"]
    return mcp.ElicitResult(action="accept", content=content)


async def answer_sampling(_server: str, _params: mcp.CreateMessageRequestParams) -> mcp.CreateMessageResult:
    return mcp.CreateMessageResult(
        role="assistant", content=mcp.TextContent(type="text", text=""), model="none"
    )


def no_roots(_server: str) -> list[mcp.Root]:
    return []


SERVER = "harness"


def connection(url: str, *, features: ClientFeatures | None = None, **entry: Any) -> Toolbox:
    tokens = FileTokenStore(Path(tempfile.mkdtemp(prefix="toolbridge-conformance-")) / "tokens.json")
    oauth = OAuth(tokens=tokens, sign_in=sign_in_by_redirect, client_name="toolbridge-conformance")
    features = features or ClientFeatures(elicitation=accept_with_defaults)
    try:
        config = parse_server(SERVER, server_entry(url, **entry), None, None)
    except ConfigError as error:
        raise SystemExit(f"the scenario's server entry was refused: {error}") from error
    features = ClientFeatures(**{**features.__dict__, "oauth": oauth})
    return Toolbox(Config(servers={SERVER: config}), native=False, features=features)


async def call(box: Toolbox, tool: str, arguments: dict[str, Any]) -> None:
    """A call as a model's goes; a refusal of toolbridge's own (bad arguments, unknown tool) fails the
    scenario loudly, where the harness would only see a call missing."""
    result = await box.call(tool, arguments)
    if result.error_kind in ("invalid_arguments", "unknown_tool", "not_allowed"):
        raise SystemExit(f"toolbridge refused the call of {tool!r}: {result.text}")


@scenario("initialize", "json-schema-ref-no-deref", "auth/*")
async def list_then_call_the_first(url: str) -> None:
    async with connection(url, **auth_entry(url)) as server:
        tools = await server.list_tools()
        if tools and os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("auth/"):
            await call(server, tools[0].name, {})


@scenario("tools_call", "http-standard-headers")
async def add_numbers(url: str) -> None:
    async with connection(url) as server:
        await server.list_tools()
        await call(server, "add_numbers", {"a": 5, "b": 3})


@scenario("request-metadata")
async def every_capability(url: str) -> None:
    features = ClientFeatures(sampling=answer_sampling, elicitation=accept_with_defaults, roots=no_roots)
    async with connection(url, features=features) as server:
        await server.list_tools()
        await call(server, "add_numbers", {"a": 5, "b": 3})


@scenario("sse-retry")
async def reconnection(url: str) -> None:
    async with connection(url) as server:
        await server.list_tools()
        await call(server, "test_reconnection", {})


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str) -> None:
    async with connection(url) as server:
        await server.list_tools()
        await call(server, "test_client_elicitation_defaults", {})


@scenario("json-schema-2020-12-preservation")
async def echo_schema(url: str) -> None:
    async with connection(url) as server:
        await server.list_tools()
        focal = server.pool.connection(SERVER).mcp_tool("json_schema_2020_12_tool")
        assert focal is not None, "the harness's json_schema_2020_12_tool was not listed"
        await call(server, "json_schema_echo", {"schema": focal.input_schema})


@scenario("http-invalid-tool-headers")
async def call_every_tool(url: str) -> None:
    async with connection(url) as server:
        for tool in await server.list_tools():
            await call(server, tool.name, stub_arguments(tool.input_schema))


@scenario("http-custom-headers")
async def replay_calls(url: str) -> None:
    async with connection(url) as server:
        listed = {tool.name for tool in await server.list_tools()}
        for asked in CONTEXT.get("toolCalls", []):
            if asked["name"] in listed:
                await call(server, asked["name"], asked.get("arguments") or {})


@scenario("sep-2322-client-request-state")
async def input_required_round_trips(url: str) -> None:
    async def confirm(_server: str, _params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        return mcp.ElicitResult(action="accept", content={"confirmed": True})

    async with connection(url, features=ClientFeatures(elicitation=confirm)) as server:
        await server.list_tools()
        for tool in (
            "test_mrtr_echo_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_state",
            "test_mrtr_no_result_type",
        ):
            await call(server, tool, {})


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """The least arguments that satisfy a schema's `required`."""
    by_type = {
        "string": "x",
        "integer": 0,
        "number": 0,
        "boolean": False,
        "object": {},
        "array": [],
        "null": None,
    }
    properties = schema.get("properties", {})
    return {
        name: by_type.get(properties.get(name, {}).get("type"), "x") for name in schema.get("required", [])
    }


def auth_entry(url: str) -> dict[str, Any]:
    """The `auth` entry a user would write for the scenario's sign-in."""
    name, context = os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), CONTEXT
    client = {key: context[key] for key in ("client_id", "client_secret") if context.get(key)}
    if name == "auth/client-credentials-jwt":
        auth = {"grant": "client_credentials", "client_id": context["client_id"],
                "private_key": context["private_key_pem"],
                "signing_algorithm": context.get("signing_algorithm", "ES256")}  # fmt: skip
    elif name == "auth/client-credentials-basic":
        auth = {"grant": "client_credentials", **client}
    elif name == "auth/enterprise-managed-authorization":
        auth = {"grant": "identity_assertion", **client, "issuer": authorization_server(url),
                **{f"idp_{key}": context[f"idp_{key}"] for key in ("token_endpoint", "client_id", "id_token")}}  # fmt: skip
    elif client:
        auth = client  # a client registered by hand
    else:  # a client that publishes its metadata document, where the authorization server takes one
        auth = {"client_metadata_url": "https://conformance-test.local/client-metadata.json"}
    return {"auth": auth} if name.startswith("auth/") else {}


def authorization_server(url: str) -> str:
    """The issuer the server's protected-resource metadata names: what a user configures as `issuer`."""
    parts = urlsplit(url)
    metadata = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    return str(httpx2.get(metadata, timeout=30).raise_for_status().json()["authorization_servers"][0])


def main() -> None:
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    url, name = sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    play = SCENARIOS.get(name) or (SCENARIOS["auth/*"] if name.startswith("auth/") else None)
    if play is None:
        raise SystemExit(f"unknown scenario {name!r}: add it to {__file__}")
    anyio.run(play, url)


if __name__ == "__main__":
    main()
