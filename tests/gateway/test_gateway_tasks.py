"""Tasks (the io.modelcontextprotocol/tasks extension) through the gateway: an upstream server's task is
relayed to a client that declares the extension under a task id of the gateway's own (its tasks/get,
tasks/update and tasks/cancel relayed upstream); a call still running after `task_after` becomes a task
of the gateway's; a client without the extension gets the result, as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import mcp_types as mcp
import pytest
from _gateway import our_server
from _gateway_tasks import KeepsTasks, TasksGateway, cancel, get, result_text, tasks_gateway, until, update
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from gateway.gateway_helpers import CLIENT_TIMEOUT, start_http_gateway
from toolbridge.mcp.tasks import TASKS_EXTENSION, TasksExtension

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:The .* capability is deprecated")]

NEVER = 3600.0
"""A `task_after` no call of these tests reaches: only an upstream task makes one."""


async def _confirm(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
    return mcp.ElicitResult(action="accept", content={"confirm": True, "name": "Ada", "age": 36})


async def test_an_upstream_task_reaches_the_client_under_a_gateway_task_id(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=NEVER), extensions=[keeps]) as client:
        await client.call_tool("slow_compute", {"seconds": 0.2, "label": "relayed"})
        [created] = keeps.created
        seen = await until(client.session, created.task_id)
        assert seen.field("status") == "completed"
        assert seen.field("taskId") == created.task_id
        assert result_text(seen) == "computed relayed"


async def test_a_task_id_the_gateway_did_not_give_is_refused(tmp_path: Path) -> None:
    async with Client(tasks_gateway(tmp_path), extensions=[KeepsTasks()]) as client:
        for made_up in ("made-up", ""):
            with pytest.raises(MCPError, match="did not give it") as refused:
                await get(client.session, made_up)
            assert refused.value.error.code == mcp.INVALID_PARAMS


async def test_tasks_methods_need_the_extension_declared(tmp_path: Path) -> None:
    async with Client(tasks_gateway(tmp_path)) as client:
        with pytest.raises(MCPError) as refused:
            await get(client.session, "any")
        assert refused.value.error.code == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY


async def test_a_client_without_the_extension_gets_the_result(tmp_path: Path) -> None:
    async with Client(tasks_gateway(tmp_path, task_after=0)) as client:
        result = await client.call_tool("slow_compute", {"seconds": 0.1, "label": "plain"})
        assert result.content[0].text == "computed plain"  # type: ignore[union-attr]


async def test_input_for_a_relayed_task_is_relayed_upstream(tmp_path: Path) -> None:
    # toolbridge's own client as the gateway's client: it follows the gateway's task and answers the
    # form inside it with tasks/update, which the gateway relays to the server's task.
    async with Client(
        tasks_gateway(tmp_path, task_after=NEVER),
        extensions=[TasksExtension()],
        elicitation_callback=_confirm,
    ) as client:
        result = await client.call_tool("confirm_delete", {"filename": "notes.txt"})
        assert result.content[0].text == "deleted notes.txt"  # type: ignore[union-attr]


async def test_cancelling_a_relayed_task_cancels_the_upstream_task(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=NEVER), extensions=[keeps]) as client:
        await client.call_tool("hold", {"tag": "relayed-cancel"})
        [created] = keeps.created
        await cancel(client.session, created.task_id)
        was = await client.call_tool("was_cancelled", {"tag": "relayed-cancel"})
        assert was.structured_content == {"result": True}
        assert (await until(client.session, created.task_id)).field("status") == "cancelled"


async def test_a_long_call_becomes_a_task_of_the_gateway(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=0), extensions=[keeps]) as client:
        await client.call_tool("greet", {"name": "Ada"})  # a tool that never makes a task upstream
        [created] = keeps.created
        assert created.status == "working"
        seen = await until(client.session, created.task_id)
        assert seen.field("status") == "completed"
        assert result_text(seen) == "Hello, Ada!"
        assert isinstance(seen.field("ttlMs"), int)


async def test_a_quick_call_is_answered_in_its_own_request(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=NEVER), extensions=[keeps]) as client:
        result = await client.call_tool("greet", {"name": "Ada"})
        assert result.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
        assert keeps.created == []


async def test_a_gateway_task_is_cancelled(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=0), extensions=[keeps]) as client:
        await client.call_tool("was_cancelled", {"tag": "never", "wait_ms": 60_000})
        [created] = keeps.created
        await cancel(client.session, created.task_id)
        seen = await get(client.session, created.task_id)
        assert seen.field("status") == "cancelled"
        await cancel(client.session, created.task_id)  # again: the same ack


async def test_a_gateway_task_asks_its_client_with_input_requests(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(
        tasks_gateway(tmp_path, task_after=0), extensions=[keeps], elicitation_callback=_confirm
    ) as client:
        await client.call_tool("ask_contact", {})  # a plain tool that asks its client (elicitation)
        [created] = keeps.created
        asked = await until(client.session, created.task_id, "input_required")
        assert asked.field("status") == "input_required"
        requests = asked.field("inputRequests")
        assert requests
        assert all(request["method"] == "elicitation/create" for request in requests.values())
        answer = {"action": "accept", "content": {"name": "Ada", "age": 36}}
        await update(client.session, created.task_id, {key: answer for key in requests})
        seen = await until(client.session, created.task_id)
        assert seen.field("status") == "completed", seen
        assert "Ada" in result_text(seen)


async def test_past_the_limit_a_call_runs_in_its_own_request(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=0, max_tasks=1), extensions=[keeps]) as client:
        await client.call_tool("was_cancelled", {"tag": "first", "wait_ms": 60_000})
        assert len(keeps.created) == 1
        result = await client.call_tool("greet", {"name": "Ada"})
        assert result.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
        assert len(keeps.created) == 1
        await cancel(client.session, keeps.created[0].task_id)


async def test_an_ended_task_is_forgotten_after_its_time(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    gateway = tasks_gateway(tmp_path, task_after=0)
    async with Client(gateway, extensions=[keeps]) as client:
        await client.call_tool("greet", {"name": "Ada"})
        [created] = keeps.created
        assert (await until(client.session, created.task_id)).field("status") == "completed"
        gateway.served.tasks.keep_seconds = 0
        with pytest.raises(MCPError, match="forgotten"):
            await get(client.session, created.task_id)


async def test_a_task_given_to_one_token_is_unknown_to_another(tmp_path: Path) -> None:
    servers = {"tasks": our_server("tasks_server")}
    tokens = {"ci": {"token": "ci-token"}, "cursor": {"token": "cursor-token"}}
    with start_http_gateway(tmp_path, {"mcpServers": servers, "gateway": {"tokens": tokens}}) as gateway:
        keeps = KeepsTasks()
        async with http_client(gateway.mcp_url, "ci-token", keeps) as owner:
            await owner.call_tool("hold", {"tag": "owned"})
            [created] = keeps.created
            async with http_client(gateway.mcp_url, "cursor-token", KeepsTasks()) as other:
                for refused_call in (get, cancel):
                    with pytest.raises(MCPError, match="did not give it") as refused:
                        await refused_call(other.session, created.task_id)
                    assert refused.value.error.code == mcp.INVALID_PARAMS
            assert (await get(owner.session, created.task_id)).field("status") == "working"
            await cancel(owner.session, created.task_id)


@asynccontextmanager
async def http_client(url: str, token: str, extension: KeepsTasks) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=CLIENT_TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http), extensions=[extension]) as client,
    ):
        yield client


async def test_on_an_older_revision_a_long_call_stays_in_its_request(tmp_path: Path) -> None:
    # A 2025-11-25 client can be asked only within its request: a task made of its call would lose the
    # way to ask it (here a form), so its call runs to its end there, even when it takes tasks.
    takes_tasks = {mcp.CLIENT_CAPABILITIES_META_KEY: {"extensions": {TASKS_EXTENSION: {}}}}
    async with Client(
        tasks_gateway(tmp_path, task_after=0), mode="legacy", elicitation_callback=_confirm
    ) as client:
        result = await client.session.call_tool("ask_contact", {}, meta=takes_tasks)
        assert not result.is_error, result
        assert "Ada" in result.content[0].text  # type: ignore[union-attr]


async def test_a_gateway_task_says_its_servers_progress_as_its_status_message(tmp_path: Path) -> None:
    keeps, release = KeepsTasks(), tmp_path / "release"
    gateway = TasksGateway(tmp_path, {"reports": our_server("reports")}, task_after=0)
    async with Client(gateway, extensions=[keeps]) as client:
        await client.call_tool("hold", {"until_file": str(release)})  # reports "halfway", then waits
        [created] = keeps.created
        while (seen := await get(client.session, created.task_id)).field("statusMessage") != "halfway":
            assert seen.field("status") == "working", seen
            await anyio.sleep(0.02)
        release.touch()
        seen = await until(client.session, created.task_id)
        assert (seen.field("status"), seen.field("statusMessage")) == ("completed", "done")
        assert result_text(seen) == "released"


async def test_a_relayed_tasks_result_is_cut_to_the_gateways_limit(tmp_path: Path) -> None:
    keeps, label = KeepsTasks(), "x" * 1000
    config = {"gateway": {"max_result_chars": 200}}
    async with Client(tasks_gateway(tmp_path, config, task_after=NEVER), extensions=[keeps]) as client:
        await client.call_tool("slow_compute", {"seconds": 0, "label": label})
        [created] = keeps.created
        seen = await until(client.session, created.task_id)
        assert seen.field("status") == "completed"
        text = result_text(seen)
        assert label not in text
        assert text.startswith("computed xxx")
        assert "cut" in text.lower() or "truncated" in text.lower(), text


async def test_a_forgotten_relayed_task_is_cancelled_upstream(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    gateway = tasks_gateway(tmp_path, task_after=NEVER)
    async with Client(gateway, extensions=[keeps]) as client:
        await client.call_tool("hold", {"tag": "forgotten"})
        [created] = keeps.created
        gateway.served.tasks.keep_seconds = 0
        with pytest.raises(MCPError, match="forgotten"):
            await get(client.session, created.task_id)  # forgets it, and cancels the server's task
        was = await client.call_tool("was_cancelled", {"tag": "forgotten"})
        assert was.structured_content == {"result": True}


async def test_a_cancelled_relayed_task_no_longer_counts_against_the_limit(tmp_path: Path) -> None:
    keeps = KeepsTasks()
    async with Client(tasks_gateway(tmp_path, task_after=NEVER, max_tasks=1), extensions=[keeps]) as client:
        await client.call_tool("hold", {"tag": "first"})
        await cancel(client.session, keeps.created[0].task_id)
        await client.call_tool("hold", {"tag": "second"})  # a task again, not followed to its end
        assert len(keeps.created) == 2
        await cancel(client.session, keeps.created[1].task_id)
