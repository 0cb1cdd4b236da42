"""What toolbridge relies on in its dependencies beyond their documented APIs, each SDK's in one adapter
module: a test per thing relied on, failing with a message that names the adapter and what changed
(test_dependency_boundaries.py keeps every other module off those internals). Run these before raising a
dependency's upper bound in pyproject.toml. The behaviour itself is tested over real sockets and servers
(test_http_client, test_server_security, tests/mcp, tests/gateway, tests/models)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import socket
import ssl
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any

import aiohttp
import anthropic
import httpx2
import mcp.client.client
import mcp.client.stdio
import openai
import pytest
import uvicorn
from httpx_aiohttp.httpx2 import AiohttpTransport
from mcp import Client, ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from uvicorn import Config, Server
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from toolbridge import _aiohttp_client, _http_client
from toolbridge.mcp import _sdk
from toolbridge.models._openai_stream import ChunkStream
from toolbridge.server._uvicorn import bounded_http_protocol


def relied_on(holds: bool, adapter: str, what: str, distribution: str) -> None:
    assert holds, (
        f"{adapter} relies on {what}, which {distribution} {version(distribution)} no longer offers: "
        f"change {adapter} to match, then allow this version in pyproject.toml"
    )


def source(thing: Any) -> str:
    return inspect.getsource(thing)


def parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _module(name: str) -> object:
    """The module, or None if it is gone."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# -- httpx2, httpx-aiohttp, aiohttp: _aiohttp_client.py ------------------------------------------------


def test_httpx2_makes_its_transports_through_the_methods_the_client_overrides() -> None:
    adapter = "_aiohttp_client.py (AiohttpClient)"
    for method in ("_init_transport", "_init_proxy_transport"):
        theirs = getattr(httpx2.AsyncClient, method, None)
        relied_on(theirs is not None, adapter, f"httpx2.AsyncClient.{method}", "httpx2")
        ours = getattr(_aiohttp_client.AiohttpClient, method)
        relied_on(
            parameters(theirs) == parameters(ours),
            adapter,
            f"the parameters of httpx2.AsyncClient.{method}: {parameters(ours)}",
            "httpx2",
        )
        relied_on(
            f"self.{method}(" in source(httpx2.AsyncClient.__init__),
            adapter,
            f"__init__ calling {method}",
            "httpx2",
        )
    limits = getattr(_module("httpx2._config"), "DEFAULT_LIMITS", None)
    relied_on(isinstance(limits, httpx2.Limits), adapter, "httpx2._config.DEFAULT_LIMITS", "httpx2")
    relied_on(hasattr(_module("httpx2._types"), "CertTypes"), adapter, "httpx2._types.CertTypes", "httpx2")


@pytest.mark.anyio
async def test_the_client_sends_over_aiohttp_directly_and_through_a_proxy() -> None:
    client = _http_client.async_http_client()
    proxied = _http_client.async_http_client(proxy="http://127.0.0.1:9")
    async with client, proxied:
        adapter = "_aiohttp_client.py (AiohttpClient)"
        relied_on(
            isinstance(client._transport, _aiohttp_client._Transport),
            adapter,
            "_init_transport's result used",
            "httpx2",
        )
        transports = list(proxied._mounts.values())
        relied_on(
            bool(transports) and all(isinstance(t, _aiohttp_client._Transport) for t in transports),
            adapter,
            "_init_proxy_transport's result used for the proxy",
            "httpx2",
        )


def test_httpx_aiohttp_builds_its_session_through_get_client_from_what_it_was_given() -> None:
    adapter = "_aiohttp_client.py (_Transport)"
    relied_on("get_client" in vars(AiohttpTransport), adapter, "AiohttpTransport.get_client", "httpx-aiohttp")
    relied_on(
        "self.get_client()" in source(AiohttpTransport),
        adapter,
        "the session made by self.get_client()",
        "httpx-aiohttp",
    )
    limits = httpx2.Limits(max_connections=7, keepalive_expiry=1.5)
    transport = _aiohttp_client._Transport(limits=limits, proxy=httpx2.Proxy("http://127.0.0.1:9"))
    relied_on(transport.limits is limits, adapter, "the transport's `limits`", "httpx-aiohttp")
    relied_on(
        isinstance(transport.ssl_context, ssl.SSLContext),
        adapter,
        "the transport's `ssl_context`",
        "httpx-aiohttp",
    )


@pytest.mark.anyio
async def test_httpx_aiohttp_keeps_aiohttps_error_as_the_cause() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    request = httpx2.Request("GET", f"http://127.0.0.1:{port}/")
    async with AiohttpTransport() as transport:
        with pytest.raises(httpx2.TransportError) as raised:
            await transport.handle_async_request(request)
    relied_on(
        isinstance(raised.value.__cause__, aiohttp.ClientConnectorError),
        "_aiohttp_client.py (_as_httpx)",
        "aiohttp's error as the __cause__ of the one raised",
        "httpx-aiohttp",
    )


def test_the_connector_takes_pooled_connections_through_get() -> None:
    adapter = "_aiohttp_client.py (_Connector)"
    get = vars(aiohttp.BaseConnector).get("_get")
    relied_on(inspect.iscoroutinefunction(get), adapter, "the coroutine BaseConnector._get", "aiohttp")
    relied_on(parameters(get) == ["self", "key", "traces"], adapter, "_get(self, key, traces)", "aiohttp")
    # connect() asks _get for a pooled connection before it opens a new one.
    relied_on(
        "await self._get(key, traces)" in source(aiohttp.BaseConnector.connect),
        adapter,
        "connect() taking pooled connections from _get",
        "aiohttp",
    )
    for module, name in [
        ("aiohttp.client_proto", "ResponseHandler"),
        ("aiohttp.client_reqrep", "ConnectionKey"),
        ("aiohttp.connector", "Connection"),
        ("aiohttp.tracing", "Trace"),
    ]:
        relied_on(hasattr(_module(module), name), adapter, f"{module}.{name}", "aiohttp")


# -- openai (and anthropic): models/_openai_stream.py, models/_retry_wait.py ---------------------------


def test_the_openai_stream_keeps_the_generator_of_its_stream_method_as_iterator() -> None:
    adapter = "models/_openai_stream.py (ChunkStream)"
    relied_on(
        inspect.isasyncgenfunction(vars(openai.AsyncStream).get("__stream__")),
        adapter,
        "the async generator AsyncStream.__stream__",
        "openai",
    )
    relied_on(
        "self._iterator = self.__stream__()" in source(openai.AsyncStream.__init__),
        adapter,
        "AsyncStream.__init__ keeping self.__stream__() as self._iterator",
        "openai",
    )
    post = inspect.signature(openai.AsyncOpenAI.post).parameters
    relied_on(
        {"content", "stream", "stream_cls"} <= set(post),
        adapter,
        "post(content=, stream=, stream_cls=)",
        "openai",
    )


@pytest.mark.anyio
async def test_the_chunk_stream_reads_a_reply_through_the_sdks_stream() -> None:
    body = b'data: {"n": 1}\n\ndata: {"n": 2}\n\ndata: [DONE]\n\n'
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    async with httpx2.AsyncClient() as http:
        client = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", http_client=http)
        stream = ChunkStream(
            cast_to=object, response=httpx2.Response(200, content=body, request=request), client=client
        )
        chunks = [chunk async for chunk in stream]
    relied_on(
        chunks == [{"n": 1}, {"n": 2}] and stream.done,
        "models/_openai_stream.py (ChunkStream)",
        f"the SDK's stream running __stream__ (read {chunks!r}, done={stream.done})",
        "openai",
    )


@pytest.mark.anyio
@pytest.mark.parametrize("sdk", [openai.AsyncOpenAI, anthropic.AsyncAnthropic])
async def test_the_sdks_do_not_retry_an_answer_marked_x_should_retry_false(sdk: type[Any]) -> None:
    distribution = sdk.__module__.split(".")[0]
    request = httpx2.Request("POST", "http://127.0.0.1:9/")
    async with httpx2.AsyncClient() as http:
        client = sdk(api_key="unused", base_url="http://127.0.0.1:9", http_client=http)
        marked = httpx2.Response(429, headers={"x-should-retry": "false"}, request=request)
        unmarked = httpx2.Response(429, request=request)
        relied_on(
            client._should_retry(unmarked) and not client._should_retry(marked),
            "models/_retry_wait.py (refuse_long_retry_waits)",
            "its retries reading x-should-retry: false",
            distribution,
        )


# -- mcp: mcp/_sdk.py --------------------------------------------------------------------------------


def test_a_servers_session_holds_its_connection() -> None:
    connection = Connection(outbound=None, protocol_version="2025-11-25")  # type: ignore[arg-type]
    session = ServerSession(None, connection)  # type: ignore[arg-type]
    relied_on(
        vars(session).get("_connection") is connection,
        "mcp/_sdk.py (connection_of)",
        "ServerSession._connection, the connection it was made with",
        "mcp",
    )
    assert _sdk.connection_of(session) is connection
    relied_on(
        "ServerSession(dctx, self.connection" in source(importlib.import_module("mcp.server.runner")),
        "mcp/_sdk.py (connection_of)",
        "a handler's session being made with the connection it came on (mcp.server.runner)",
        "mcp",
    )


def test_the_client_makes_its_session_through_build_session_and_probes_through_send_discover() -> None:
    adapter = "mcp/_sdk.py (ProbingClient)"
    build = vars(Client).get("_build_session")
    relied_on(inspect.iscoroutinefunction(build), adapter, "the coroutine Client._build_session", "mcp")
    relied_on(parameters(build) == ["self", "exit_stack"], adapter, "_build_session(self, exit_stack)", "mcp")
    relied_on(
        inspect.signature(build).parameters["exit_stack"].annotation in (AsyncExitStack, "AsyncExitStack"),
        adapter,
        "_build_session taking an AsyncExitStack",
        "mcp",
    )
    relied_on(
        "self._build_session(exit_stack)" in source(Client.__aenter__),
        adapter,
        "__aenter__ calling it",
        "mcp",
    )
    relied_on(
        parameters(ClientSession.send_discover) == ["self", "version"],
        adapter,
        "send_discover(version)",
        "mcp",
    )
    negotiate = vars(mcp.client.client).get("negotiate_auto")
    relied_on(
        negotiate is not None and "session.send_discover(" in source(negotiate),
        adapter,
        "`auto` negotiation probing through session.send_discover, falling back on an MCPError",
        "mcp",
    )
    # The probe may have made the handshake already; the negotiation's own call must then send nothing.
    relied_on(
        "if self._initialize_result is not None:\n            return self._initialize_result"
        in source(ClientSession.initialize),
        adapter,
        "ClientSession.initialize returning its cached result when called again",
        "mcp",
    )


def test_the_client_drives_input_required_through_one_seam_and_sends_through_its_dispatcher() -> None:
    """`Passthrough`: a first `InputRequiredResult` reaches `Client._drive_input_required` (overridden to
    hand it back), the seeds are public keywords, and each request leaves through the session's
    dispatcher's `send_raw_request` with its `_meta` already stamped (the capabilities are swapped there)."""
    adapter = "mcp/_sdk.py (Passthrough)"
    drive = vars(Client).get("_drive_input_required")
    relied_on(
        inspect.iscoroutinefunction(drive) and parameters(drive) == ["self", "first", "retry"],
        adapter,
        "the coroutine Client._drive_input_required(self, first, retry)",
        "mcp",
    )
    for method in (Client.call_tool, Client.get_prompt, Client.read_resource):
        relied_on(
            "self._drive_input_required(" in source(method)
            and {"input_responses", "request_state"} <= set(parameters(method)),
            adapter,
            f"Client.{method.__name__} taking input_responses and request_state, driven by _drive_input_required",
            "mcp",
        )
    relied_on(
        parameters(Client.call_tool)[:5]
        == ["self", "name", "arguments", "read_timeout_seconds", "progress_callback"],
        adapter,
        "Client.call_tool(name, arguments, read_timeout_seconds, progress_callback, ...)",
        "mcp",
    )
    send = source(ClientSession.send_request)
    relied_on(
        send.index("self._stamp(data, opts)") < send.index("self._dispatcher.send_raw_request("),
        adapter,
        "ClientSession.send_request stamping `_meta` before self._dispatcher.send_raw_request",
        "mcp",
    )
    relied_on(
        "meta[CLIENT_CAPABILITIES_META_KEY] = capabilities"
        in source(importlib.import_module("mcp.client.session")),
        adapter,
        "the client capabilities stamped under CLIENT_CAPABILITIES_META_KEY in each request's _meta",
        "mcp",
    )


class _MemoryStorage:
    def __init__(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        pass


class _Refreshing(_sdk.EarlyRefresh, OAuthClientProvider):
    def refresh_margin(self, token: OAuthToken) -> float:
        return 60.0

    def stored_token_expiry(self) -> float | None:
        return 1_000_000.0


@pytest.mark.anyio
async def test_oauth_providers_load_stored_tokens_in_initialize_into_a_dataclass_context() -> None:
    adapter = "mcp/_sdk.py (EarlyRefresh)"
    relied_on(dataclasses.is_dataclass(OAuthContext), adapter, "OAuthContext being a dataclass", "mcp")
    fields = {field.name for field in dataclasses.fields(OAuthContext)}
    relied_on(
        {"current_tokens", "token_expiry_time"} <= fields,
        adapter,
        "its current_tokens, token_expiry_time",
        "mcp",
    )
    for provider in (OAuthClientProvider, ClientCredentialsOAuthProvider):
        relied_on(
            inspect.iscoroutinefunction(getattr(provider, "_initialize", None)),
            adapter,
            f"the coroutine {provider.__name__}._initialize",
            "mcp",
        )
        taken = {"refresh_margin", "stored_token_expiry", "refresh_early"} & set(dir(provider))
        relied_on(
            not taken, adapter, f"{provider.__name__} having no names of its own {sorted(taken)}", "mcp"
        )
    token = OAuthToken(access_token="a", token_type="Bearer", expires_in=3600)
    metadata = OAuthClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"])  # type: ignore[list-item]
    provider = _Refreshing("http://127.0.0.1:9/mcp", metadata, _MemoryStorage(token))
    provider.refresh_early()
    await provider._initialize()
    relied_on(
        provider.context.current_tokens == token and provider.context.token_expiry_time == 1_000_000.0 - 60.0,
        adapter,
        "_initialize loading the stored tokens into the context",
        "mcp",
    )
    provider.context.update_token_expiry(token)
    expiry = provider.context.token_expiry_time
    relied_on(
        expiry is not None and expiry < 1e10, adapter, "update_token_expiry setting token_expiry_time", "mcp"
    )


@pytest.mark.parametrize(
    ("record", "module"),
    [(_sdk.STDIO_PARSE_FAILURE, mcp.client.stdio), (_sdk.OAUTH_FLOW_ERROR, "mcp.client.auth.oauth2")],
)
def test_the_sdk_logs_the_records_dropped_by_their_logger_and_message(
    record: _sdk.SdkLogRecord, module: Any
) -> None:
    module = importlib.import_module(module) if isinstance(module, str) else module
    relied_on(
        module.__name__ == record.logger and getattr(module, "logger", None) is not None,
        "mcp/_sdk.py (drop_log_record)",
        f"{module.__name__} logging to its module's logger",
        "mcp",
    )
    relied_on(
        f'"{record.message}"' in source(module),
        "mcp/_sdk.py (drop_log_record)",
        f"{record.logger} logging {record.message!r}",
        "mcp",
    )


# -- uvicorn: server/_uvicorn.py ----------------------------------------------------------------------


def test_the_httptools_protocol_has_what_the_bounded_one_overrides_and_reads() -> None:
    adapter = "server/_uvicorn.py (BoundedHttpToolsProtocol)"
    for callback in ("data_received", "on_headers_complete", "on_message_complete"):
        relied_on(callback in vars(HttpToolsProtocol), adapter, f"HttpToolsProtocol.{callback}", "uvicorn")
        assert callback in vars(bounded_http_protocol()), callback
    # What the bounded protocol reads of the instance, set by uvicorn's __init__ and connection_made.
    protocol = source(HttpToolsProtocol)
    for attribute in ("self.parser", "self.transport", "self.cycle", "self.logger"):
        relied_on(f"{attribute} =" in protocol, adapter, attribute, "uvicorn")
    relied_on(
        "response_complete" in source(inspect.getmodule(HttpToolsProtocol)),
        adapter,
        "cycle.response_complete",
        "uvicorn",
    )
    # a protocol class is accepted
    relied_on(
        inspect.signature(Config).parameters["http"].default == "auto", adapter, "Config(http=)", "uvicorn"
    )


def test_the_graceful_server_finds_the_signals_uvicorn_captured() -> None:
    relied_on(
        "self._captured_signals" in source(Server),
        "server/_uvicorn.py (_GracefulServer)",
        "Server._captured_signals",
        "uvicorn",
    )


def test_the_background_server_replaces_the_main_loop_and_shutdown() -> None:
    # The test kits' server (the scripted model servers') overrides public but undocumented methods.
    adapter = "server/_uvicorn.py (_ThreadedServer)"
    serve = source(Server)
    for step in (
        "await self.startup(sockets=sockets)",
        "await self.main_loop()",
        "await self.shutdown(sockets=sockets)",
    ):
        relied_on(step in serve, adapter, f"Server.serve running {step}", "uvicorn")
    for name in ("startup", "shutdown"):
        relied_on(
            parameters(getattr(Server, name)) == ["self", "sockets"],
            adapter,
            f"Server.{name}(sockets)",
            "uvicorn",
        )
    relied_on("self.servers" in serve, adapter, "Server.servers", "uvicorn")
    state = ServerState()
    relied_on(
        isinstance(state.connections, set) and isinstance(state.tasks, set),
        adapter,
        "ServerState.connections, .tasks",
        "uvicorn",
    )
    relied_on(
        callable(getattr(HttpToolsProtocol, "shutdown", None)),
        adapter,
        "a connection's shutdown()",
        "uvicorn",
    )
    relied_on(uvicorn.Server is Server, adapter, "uvicorn.Server", "uvicorn")
