"""The server the official MCP conformance harness's server suite expects (its `--url` target), on both
revisions (2025-11-25 and 2026-07-28): the tools, resources, prompts and completions its scenarios call
by name, over streamable HTTP on 127.0.0.1.

    python tests/servers/conformance_everything.py --port 0   # prints "listening on http://127.0.0.1:PORT/mcp"

The gateway's conformance test runs the harness against it direct and through `toolbridge gateway`.
What each fixture answers is what the harness checks (its `dist/index.js`); the names are its own.
"""

from __future__ import annotations

import argparse
import base64
import json
import socket
import sys
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import mcp_types as mcp
import uvicorn
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_TINY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
SSE_RETRY_MS = 100
"""What the server asks clients to wait before reconnecting a closed stream (`server-sse-polling`)."""


class RememberedEvents(EventStore):
    """Every SSE event of the run, so a client that lost a stream resumes it with `Last-Event-ID`."""

    def __init__(self) -> None:
        self._events: list[tuple[str, mcp.JSONRPCMessage | None]] = []

    async def store_event(self, stream_id: str, message: mcp.JSONRPCMessage | None) -> str:
        self._events.append((stream_id, message))
        return str(len(self._events))

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        if not last_event_id.isdigit() or not 0 < int(last_event_id) <= len(self._events):
            return None
        after = int(last_event_id)
        stream = self._events[after - 1][0]
        for number, (stream_id, message) in enumerate(self._events[after:], start=after + 1):
            if stream_id == stream and message is not None:  # None: a priming event, nothing to replay
                await send_callback(EventMessage(message, str(number)))
        return stream


def _text(text: str) -> mcp.TextContent:
    return mcp.TextContent(type="text", text=text)


def _form(message: str, **properties: str) -> mcp.ElicitRequest:
    """A form asking for string/boolean fields (all required)."""
    schema = {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }
    return mcp.ElicitRequest(params=mcp.ElicitRequestFormParams(message=message, requested_schema=schema))


def _sampling(prompt: str, max_tokens: int = 64) -> mcp.CreateMessageRequest:
    message = mcp.SamplingMessage(role="user", content=_text(prompt))
    return mcp.CreateMessageRequest(
        params=mcp.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def _form_field(answer: object, field: str) -> object:
    if isinstance(answer, mcp.ElicitResult) and answer.content:
        return answer.content.get(field)
    return None


# -- tools ------------------------------------------------------------------------------------------


def test_simple_text() -> str:
    """Answers with one text block."""
    return "This is a simple text response for testing."


def test_image_content() -> list[mcp.ImageContent]:
    """Answers with one PNG image."""
    return [mcp.ImageContent(type="image", data=PNG_1PX, mime_type="image/png")]


def test_audio_content() -> list[mcp.AudioContent]:
    """Answers with one WAV clip."""
    return [mcp.AudioContent(type="audio", data=WAV_TINY, mime_type="audio/wav")]


def test_embedded_resource() -> list[mcp.EmbeddedResource]:
    """Answers with an embedded text resource."""
    contents = mcp.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return [mcp.EmbeddedResource(type="resource", resource=contents)]


def test_multiple_content_types() -> list[mcp.TextContent | mcp.ImageContent | mcp.EmbeddedResource]:
    """Answers with text, an image and an embedded resource."""
    contents = mcp.TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text='{"test": "data", "value": 123}',
    )
    return [
        _text("Multiple content types test:"),
        mcp.ImageContent(type="image", data=PNG_1PX, mime_type="image/png"),
        mcp.EmbeddedResource(type="resource", resource=contents),
    ]


async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three messages while it runs."""
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.log("info", step)
    return "Tool with logging executed successfully"


async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100; answers with the client's progress token."""
    for done in (0, 50, 100):
        await ctx.report_progress(progress=done, total=100, message=f"Completed step {done} of 100")
    meta = ctx.request_context.meta if ctx.request_context else None
    return str(meta.get("progress_token") if meta else 0)


async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model (server-initiated sampling, 2025 revisions)."""
    try:
        result = await ctx.session.create_message(
            messages=[mcp.SamplingMessage(role="user", content=_text(prompt))],
            max_tokens=100,
            related_request_id=ctx.request_id,
        )
    except Exception as exc:
        return f"Sampling not supported or error: {exc}"
    return f"LLM response: {result.content.text if result.content.type == 'text' else 'No response'}"


class _Answer(BaseModel):
    response: str = Field(description="User's response")


async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for one string (server-initiated elicitation, 2025 revisions)."""
    try:
        result = await ctx.elicit(message=message, schema=_Answer)
    except Exception as exc:
        return f"Elicitation not supported or error: {exc}"
    content = result.data.model_dump_json() if result.action == "accept" else "{}"
    return f"User response: action={result.action}, content={content}"


class _WithDefaults(BaseModel):
    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: str = Field(
        default="active",
        description="User status",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    verified: bool = Field(default=True, description="Verification status")


async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """A form whose every primitive field has a default (SEP-1034)."""
    try:
        result = await ctx.elicit(message="Please provide user information", schema=_WithDefaults)
    except Exception as exc:
        return f"Elicitation not supported or error: {exc}"
    content = result.data.model_dump_json() if result.action == "accept" else "{}"
    return f"Elicitation result: action={result.action}, content={content}"


def _choices(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


class _Enums(BaseModel):
    untitledSingle: str = Field(
        description="Simple enum without titles",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    titledSingle: str = Field(
        description="Enum with titled options (oneOf)",
        json_schema_extra={
            "oneOf": _choices(
                ("low", "Low Priority"), ("medium", "Medium Priority"), ("high", "High Priority")
            )
        },
    )
    untitledMulti: list[str] = Field(
        description="Multi-select without titles",
        json_schema_extra={"items": {"type": "string", "enum": ["read", "write", "execute"]}},
    )
    titledMulti: list[str] = Field(
        description="Multi-select with titled options",
        json_schema_extra={
            "items": {
                "anyOf": _choices(("feature", "New Feature"), ("bug", "Bug Fix"), ("docs", "Documentation"))
            }
        },
    )
    legacyEnum: str = Field(
        description="Legacy enum with enumNames",
        json_schema_extra={
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
    )


async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """A form with every enum shape (SEP-1330)."""
    try:
        result = await ctx.elicit(
            message="Please select values using different enum schema types", schema=_Enums
        )
    except Exception as exc:
        return f"Elicitation not supported or error: {exc}"
    content = result.data.model_dump_json() if result.action == "accept" else "{}"
    return f"Elicitation completed: action={result.action}, content={content}"


def test_error_handling() -> str:
    """Always fails (an error result)."""
    raise RuntimeError("This tool intentionally returns an error for testing")


def test_x_mcp_header(
    region: Annotated[
        str,
        Field(
            description="Sent as the Mcp-Param-Region header too",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ] = "<none>",  # noqa: PT028 - a tool, named as the harness calls it
) -> str:
    """Has a parameter mirrored into a header (SEP-2243)."""
    return f"region={region}"


def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability; without it a protocol error naming it."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        raise MCPError(
            code=mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This tool needs the client's 'sampling' capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return "The client declared sampling."


async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream in the middle of the call; the client resumes it (SEP-1699)."""
    await ctx.log("info", "Before disconnect")
    await ctx.close_sse_stream()
    await anyio.sleep(0.2)  # the client reconnects meanwhile; the result goes on the resumed stream
    await ctx.log("info", "After reconnect")
    return "Reconnection test completed"


# -- input_required (2026-07-28): the answers come back with the client's next call -----------------


def test_input_required_result_elicitation(ctx: Context) -> str | mcp.InputRequiredResult:
    """One form, then a greeting with the name given."""
    responses = ctx.input_responses or {}
    if "user_name" in responses:
        return f"Hello, {_form_field(responses['user_name'], 'name') or 'stranger'}!"
    return mcp.InputRequiredResult(input_requests={"user_name": _form("What is your name?", name="string")})


def test_input_required_result_sampling(ctx: Context) -> str | mcp.InputRequiredResult:
    """One sampling request, then what the model said."""
    answer = (ctx.input_responses or {}).get("capital_question")
    if answer is not None:
        said = (
            answer.content.text
            if isinstance(answer, mcp.CreateMessageResult) and answer.content.type == "text"
            else "?"
        )
        return f"Model said: {said}"
    return mcp.InputRequiredResult(
        input_requests={"capital_question": _sampling("What is the capital of France?", 100)}
    )


def test_input_required_result_list_roots(ctx: Context) -> str | mcp.InputRequiredResult:
    """Asks for the client's roots, then counts them."""
    answer = (ctx.input_responses or {}).get("client_roots")
    if answer is not None:
        return (
            f"Client exposed {len(answer.roots) if isinstance(answer, mcp.ListRootsResult) else 0} root(s)."
        )
    return mcp.InputRequiredResult(input_requests={"client_roots": mcp.ListRootsRequest()})


def test_input_required_result_request_state(ctx: Context) -> str | mcp.InputRequiredResult:
    """Needs its `requestState` echoed with the answer."""
    if "confirm" in (ctx.input_responses or {}) and ctx.request_state == "request-state-nonce":
        return "state-ok: confirmation received"
    return mcp.InputRequiredResult(
        input_requests={"confirm": _form("Please confirm", ok="boolean")}, request_state="request-state-nonce"
    )


def test_input_required_result_multiple_inputs(ctx: Context) -> str | mcp.InputRequiredResult:
    """A form, a sampling request and the roots in one round."""
    if {"user_name", "greeting", "client_roots"} <= (ctx.input_responses or {}).keys():
        return "All inputs received."
    return mcp.InputRequiredResult(
        input_requests={
            "user_name": _form("What is your name?", name="string"),
            "greeting": _sampling("Generate a greeting", 50),
            "client_roots": mcp.ListRootsRequest(),
        },
        request_state="multiple-inputs",
    )


def test_input_required_result_multi_round(ctx: Context) -> str | mcp.InputRequiredResult:
    """Three rounds: a name, then a colour, then the answer; the state says which round it is."""
    state = json.loads(ctx.request_state) if ctx.request_state else {"round": 0}
    responses = ctx.input_responses or {}
    if state.get("round") == 1 and "step1" in responses:
        name = _form_field(responses["step1"], "name")
        return mcp.InputRequiredResult(
            input_requests={"step2": _form("Step 2: What is your favorite color?", color="string")},
            request_state=json.dumps({"round": 2, "name": name}),
        )
    if state.get("round") == 2 and "step2" in responses:
        return f"{state.get('name')} likes {_form_field(responses['step2'], 'color')}."
    # The first round, or an answer missing or out of order: start over.
    return mcp.InputRequiredResult(
        input_requests={"step1": _form("Step 1: What is your name?", name="string")},
        request_state=json.dumps({"round": 1}),
    )


def test_input_required_result_tampered_state(ctx: Context) -> str | mcp.InputRequiredResult:
    """Its `requestState` is sealed by the SDK: a changed one is refused before this runs."""
    if ctx.request_state is None:
        return mcp.InputRequiredResult(
            input_requests={"confirm": _form("Please confirm", ok="boolean")}, request_state="round-1"
        )
    return f"state-ok: {ctx.request_state}"


def test_input_required_result_capabilities(ctx: Context) -> mcp.InputRequiredResult:
    """Asks only for what the client declared it can answer."""
    capabilities = ctx.client_capabilities
    requests: dict[str, mcp.InputRequest] = {}
    if capabilities is None or capabilities.sampling is not None:
        requests["sample"] = _sampling("Say hello", 50)
    if capabilities is None or capabilities.elicitation is not None:
        requests["ask"] = _form("What is your name?", name="string")
    return mcp.InputRequiredResult(input_requests=requests, request_state="capability-gated")


# -- JSON Schema 2020-12 (SEP-1613): keywords a client must pass on untouched ------------------------

SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def json_schema_2020_12_tool() -> str:
    """Its input schema uses JSON Schema 2020-12 keywords."""
    return "json_schema_2020_12_tool"


def _with_schema(function: Callable[..., Any], schema: dict[str, Any]) -> Tool:
    return Tool.from_function(function).model_copy(update={"parameters": schema})


# -- the server ------------------------------------------------------------------------------------

_REQUEST_STATE_KEY = b"toolbridge-conformance-everything-request-state"
"""A fixed key (32 bytes at least): the sealed `requestState` survives the server's restarts."""

TOOLS: list[Callable[..., Any]] = [
    test_simple_text,
    test_image_content,
    test_audio_content,
    test_embedded_resource,
    test_multiple_content_types,
    test_tool_with_logging,
    test_tool_with_progress,
    test_sampling,
    test_elicitation,
    test_elicitation_sep1034_defaults,
    test_elicitation_sep1330_enums,
    test_error_handling,
    test_x_mcp_header,
    test_missing_capability,
    test_reconnection,
    test_input_required_result_elicitation,
    test_input_required_result_sampling,
    test_input_required_result_list_roots,
    test_input_required_result_request_state,
    test_input_required_result_multiple_inputs,
    test_input_required_result_multi_round,
    test_input_required_result_tampered_state,
    test_input_required_result_capabilities,
]


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "toolbridge-conformance-everything",
        version="1.0.0",
        tools=[_with_schema(json_schema_2020_12_tool, SCHEMA_2020_12)],
        request_state_security=RequestStateSecurity(keys=[_REQUEST_STATE_KEY]),
        log_level="WARNING",
    )
    for tool in TOOLS:
        server.add_tool(tool)
    _add_list_changers(server)
    _add_resources(server)
    _add_prompts(server)

    @server.completion()
    async def complete(
        ref: mcp.PromptReference | mcp.ResourceTemplateReference,
        argument: mcp.CompletionArgument,
        context: mcp.CompletionContext | None,
    ) -> mcp.Completion:
        return mcp.Completion(values=[], total=0, has_more=False)

    lowlevel = server._lowlevel_server  # the SDK's MCPServer has no public hook for these yet
    lowlevel.add_request_handler("logging/setLevel", mcp.SetLevelRequestParams, _empty)
    lowlevel.add_request_handler("resources/subscribe", mcp.SubscribeRequestParams, _empty)
    lowlevel.add_request_handler("resources/unsubscribe", mcp.UnsubscribeRequestParams, _empty)
    return server


async def _empty(ctx: Any, params: Any) -> mcp.EmptyResult:
    return mcp.EmptyResult()


def _add_list_changers(server: MCPServer[Any]) -> None:
    """Tools that change a list and say so on `subscriptions/listen` streams (SEP-2575)."""

    def short_lived() -> str:
        """Added and removed again at once."""
        return "gone"

    async def test_trigger_tool_change(ctx: Context) -> str:
        """Changes the tool list."""
        server.add_tool(short_lived, name="test_dynamic_tool")
        server.remove_tool("test_dynamic_tool")
        await ctx.notify_tools_changed()
        return "tool list changed"

    async def test_trigger_prompt_change(ctx: Context) -> str:
        """Changes the prompt list."""
        server.add_prompt(
            Prompt.from_function(short_lived, name="test_dynamic_prompt", description="short-lived")
        )
        server.remove_prompt("test_dynamic_prompt")
        await ctx.notify_prompts_changed()
        return "prompt list changed"

    server.add_tool(test_trigger_tool_change)
    server.add_tool(test_trigger_prompt_change)


def _add_resources(server: MCPServer[Any]) -> None:
    @server.resource("test://static-text")
    def static_text() -> str:
        """Static text."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary")
    def static_binary() -> bytes:
        """A PNG image."""
        return base64.b64decode(PNG_1PX)

    @server.resource("test://template/{id}/data")
    def template(id: str) -> str:
        """Data for an id."""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource("test://watched-resource")
    def watched() -> str:
        """A resource a client may subscribe to."""
        return "Watched resource content"


def _add_prompts(server: MCPServer[Any]) -> None:
    @server.prompt()
    def test_simple_prompt() -> list[UserMessage]:
        """No arguments."""
        return [UserMessage(role="user", content=_text("This is a simple prompt for testing."))]

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
        """Two required arguments."""
        return [
            UserMessage(role="user", content=_text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))
        ]

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
        """Embeds the resource named."""
        contents = mcp.TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            UserMessage(role="user", content=mcp.EmbeddedResource(type="resource", resource=contents)),
            UserMessage(role="user", content=_text("Please process the embedded resource above.")),
        ]

    @server.prompt()
    def test_prompt_with_image() -> list[UserMessage]:
        """An image, then text."""
        return [
            UserMessage(
                role="user", content=mcp.ImageContent(type="image", data=PNG_1PX, mime_type="image/png")
            ),
            UserMessage(role="user", content=_text("Please analyze the image above.")),
        ]

    @server.prompt()
    def test_input_required_result_prompt(ctx: Context) -> list[UserMessage] | mcp.InputRequiredResult:
        """Asks for context first (input_required outside tools, SEP-2322)."""
        answer = (ctx.input_responses or {}).get("user_context")
        if answer is not None:
            text = _form_field(answer, "context") or "?"
            return [UserMessage(role="user", content=_text(f"Use the following context: {text}"))]
        return mcp.InputRequiredResult(
            input_requests={"user_context": _form("What context should the prompt use?", context="string")}
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one, printed)")
    parser.add_argument(
        "--fd", type=int, help="serve on this inherited listening socket (tests/listening.py)"
    )
    options = parser.parse_args()
    if options.fd is not None:
        listening = socket.socket(fileno=options.fd)
    else:
        listening = socket.create_server(("127.0.0.1", options.port))
    print(f"listening on http://127.0.0.1:{listening.getsockname()[1]}/mcp", flush=True)
    app = build().streamable_http_app(event_store=RememberedEvents(), retry_interval=SSE_RETRY_MS)
    # h11 trims the white space around header values (RFC 9110), as the SDK's header checks expect.
    config = uvicorn.Config(app, log_level="warning", http="h11")
    uvicorn.Server(config).run(sockets=[listening])


if __name__ == "__main__":
    sys.exit(main())
