"""The gateway passes its client's requests on as that client's own. The upstream server sees the
client's capabilities (each request's `_meta` on 2026-07-28); its `input_required` reaches a 2026-07-28
client as the server gave it (its keys, its `requestState`), for tool calls, prompts and resource reads
alike, and the client's next request reaches the server unchanged, which checks its own state
(conformance input-required-result-*, server-stateless). A 2025-11-25 client's call goes over a session
of its revision, where the tool may ask it mid-call (tools-call-sampling, tools-call-elicitation).

The upstream is tests/servers/conformance_everything.py over loopback HTTP (the harness's fixtures), or
tests/servers/modern.py over stdio; the gateway the one `toolbridge gateway` serves, in process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

from listening import start_listening_process
from server_paths import test_server_path
from toolbridge.store import Store

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:The .* capability is deprecated")]


@pytest.fixture(scope="module")
def everything() -> Iterator[dict[str, dict[str, str]]]:
    command = [sys.executable, test_server_path("conformance_everything")]
    process, port = start_listening_process(command, "the conformance everything server")
    try:
        yield {"everything": {"url": f"http://127.0.0.1:{port}/mcp"}}
    finally:
        process.terminate()
        process.wait(10)


async def _answer(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
    return mcp.ElicitResult(action="accept", content={"ok": True, "context": "the docs", "response": "yes"})


async def _sample(
    context: ClientRequestContext, params: mcp.CreateMessageRequestParams
) -> mcp.CreateMessageResult:
    return mcp.CreateMessageResult(
        role="assistant", content=mcp.TextContent(type="text", text="hi"), model="m"
    )


def _text(result: mcp.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp.TextContent)
    return block.text


async def test_a_tools_input_required_reaches_the_client_as_the_server_gave_it(
    tmp_path: Path, everything: dict[str, dict[str, str]]
) -> None:
    async with Client(gateway(tmp_path, everything, native=False), elicitation_callback=_answer) as client:
        assert client.protocol_version == "2026-07-28"
        first = await client.session.call_tool(
            "test_input_required_result_request_state", {}, allow_input_required=True
        )
        assert isinstance(first, mcp.InputRequiredResult)
        assert list(first.input_requests) == ["confirm"]  # the server's key, not one of the gateway's
        assert first.request_state is not None  # the server's own (sealed by the SDK)
        answers = {"confirm": mcp.ElicitResult(action="accept", content={"ok": True})}
        done = await client.session.call_tool(
            "test_input_required_result_request_state",
            {},
            input_responses=answers,  # type: ignore[arg-type]
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(done, mcp.CallToolResult)
        assert "state-ok" in _text(done)  # the server got its state back, as it gave it
        # The SDK's own driver answers the server's questions through the gateway as well.
        assert (
            _text(await client.call_tool("test_input_required_result_elicitation", {})) == "Hello, stranger!"
        )
    # Each call is logged once, as it ended: the rounds the client answered are not failed calls.
    with Store(f"sqlite:///{tmp_path / 'calls.db'}") as store:
        logged = {stats.tool: stats for stats in store.tool_stats()}
    for tool in ("test_input_required_result_request_state", "test_input_required_result_elicitation"):
        assert (logged[tool].calls, logged[tool].failed) == (1, 0), tool


async def test_a_state_the_server_did_not_give_is_refused_by_the_server(
    tmp_path: Path, everything: dict[str, dict[str, str]]
) -> None:
    async with Client(gateway(tmp_path, everything, native=False), elicitation_callback=_answer) as client:
        first = await client.session.call_tool(
            "test_input_required_result_tampered_state", {}, allow_input_required=True
        )
        assert isinstance(first, mcp.InputRequiredResult)
        assert first.request_state is not None
        with pytest.raises(MCPError) as refused:
            await client.session.call_tool(
                "test_input_required_result_tampered_state",
                {},
                input_responses={"confirm": mcp.ElicitResult(action="accept", content={"ok": True})},  # type: ignore[arg-type]
                request_state=first.request_state + "-TAMPERED",
                allow_input_required=True,
            )
        assert refused.value.code == mcp.INVALID_PARAMS


async def test_a_prompts_input_required_reaches_the_client(
    tmp_path: Path, everything: dict[str, dict[str, str]]
) -> None:
    async with Client(gateway(tmp_path, everything, native=False), elicitation_callback=_answer) as client:
        first = await client.session.get_prompt(
            "test_input_required_result_prompt", allow_input_required=True
        )
        assert isinstance(first, mcp.InputRequiredResult)
        assert list(first.input_requests) == ["user_context"]
        prompt = await client.get_prompt(
            "test_input_required_result_prompt"
        )  # the SDK answers, and asks again
        content = prompt.messages[0].content
        assert isinstance(content, mcp.TextContent)
        assert content.text == "Use the following context: the docs"


async def test_a_resource_reads_input_required_reaches_the_client(tmp_path: Path) -> None:
    async def name_ada(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        return mcp.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(
        gateway(tmp_path, {"modern": our_server("modern")}), elicitation_callback=name_ada
    ) as client:
        first = await client.session.read_resource("letter://tea", allow_input_required=True)
        assert isinstance(first, mcp.InputRequiredResult)
        assert list(first.input_requests) == ["who"]  # the server's key
        read = await client.read_resource("letter://tea")  # the SDK answers, and reads again with the state
        contents = read.contents[0]
        assert isinstance(contents, mcp.TextResourceContents)
        assert contents.text == "Dear Ada, about tea."


async def test_the_server_sees_the_capabilities_of_the_client_not_the_gateways(
    tmp_path: Path, everything: dict[str, dict[str, str]]
) -> None:
    async with Client(
        gateway(tmp_path, everything, native=False), sampling_callback=_sample
    ) as sampling_only:
        asked = await sampling_only.session.call_tool(
            "test_input_required_result_capabilities", {}, allow_input_required=True
        )
        assert isinstance(asked, mcp.InputRequiredResult)
        assert list(asked.input_requests) == ["sample"]  # no form: this client cannot fill one in
    async with Client(gateway(tmp_path, everything, native=False)) as plain:
        with pytest.raises(MCPError) as refused:
            await plain.call_tool("test_missing_capability", {})
        assert refused.value.code == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}


async def test_a_2025_clients_call_reaches_the_server_over_a_session_of_its_revision(
    tmp_path: Path, everything: dict[str, dict[str, str]]
) -> None:
    """The gateway speaks 2026-07-28 with a server that speaks both; a 2025-11-25 client's call goes over a
    session of that revision, so the tool's questions mid-call (which 2026-07-28 rules out) reach it."""
    served = gateway(tmp_path, everything, native=False)
    async with Client(
        served, mode="legacy", sampling_callback=_sample, elicitation_callback=_answer
    ) as client:
        assert client.protocol_version == "2025-11-25"
        sampled = await client.call_tool("test_sampling", {"prompt": "Say hi"})
        assert _text(sampled) == "LLM response: hi"
        asked = await client.call_tool("test_elicitation", {"message": "Anything?"})
        assert _text(asked).startswith("User response: action=accept")
    async with Client(served, elicitation_callback=_answer) as modern:  # the 2026-07-28 session still serves
        assert modern.protocol_version == "2026-07-28"
        assert (
            _text(await modern.call_tool("test_input_required_result_elicitation", {})) == "Hello, stranger!"
        )


async def test_a_2025_client_answers_the_questions_of_a_2026_servers_prompt_and_read(tmp_path: Path) -> None:
    """The gateway answers the server's `input_required` itself, asking the client that made the request
    (which cannot be asked in rounds) with requests of its own."""
    asked: list[str] = []

    async def name_ada(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        asked.append(params.message)
        return mcp.ElicitResult(action="accept", content={"name": "Ada"})

    served = gateway(tmp_path, {"modern": our_server("modern")})
    async with Client(served, mode="legacy", elicitation_callback=name_ada) as client:
        assert client.protocol_version == "2025-11-25"
        read = await client.read_resource("letter://tea")
        contents = read.contents[0]
        assert isinstance(contents, mcp.TextResourceContents)
        assert contents.text == "Dear Ada, about tea."
        prompt = await client.get_prompt("greeting")
        content = prompt.messages[0].content
        assert isinstance(content, mcp.TextContent)
        assert content.text == "Write a greeting for Ada."
    assert asked == ["Who is this for?", "Who is this for?"]


async def test_each_of_a_2025_clients_reads_at_once_has_its_own_question_answered(tmp_path: Path) -> None:
    both_asked = anyio.Event()
    asked: list[str] = []

    async def name_ada(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        asked.append(params.message)
        if len(asked) == 2:
            both_asked.set()
        await both_asked.wait()  # neither is answered until both reads are waiting on their question
        return mcp.ElicitResult(action="accept", content={"name": "Ada"})

    letters: dict[str, str] = {}
    async with Client(
        gateway(tmp_path, {"modern": our_server("modern")}), mode="legacy", elicitation_callback=name_ada
    ) as client:

        async def read(topic: str) -> None:
            contents = (await client.read_resource(f"letter://{topic}")).contents[0]
            assert isinstance(contents, mcp.TextResourceContents)
            letters[topic] = contents.text

        with anyio.fail_after(30):
            async with anyio.create_task_group() as reading:
                reading.start_soon(read, "tea")
                reading.start_soon(read, "cake")
    assert letters == {"tea": "Dear Ada, about tea.", "cake": "Dear Ada, about cake."}
