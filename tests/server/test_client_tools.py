"""A pass-through client's tools are checked and built once per distinct definition: clients send the
same `tools` with every request, and checking a schema costs more than the rest of the request. Many
new ones are checked in a worker thread, off the event loop."""

from __future__ import annotations

import copy
import threading
import uuid
from typing import Any

import anyio
import pytest
from passthrough_helpers import WEATHER_TOOL

from toolbridge.server.openai import client_tools as client_tools_module
from toolbridge.server.openai.client_tools import Built, Definition, client_tool, client_tools
from toolbridge.tools import schema_problem, validate_arguments
from toolbridge.tools import validation as argument_validation


def test_an_equal_definition_gets_the_tool_built_before_with_its_validator_compiled() -> None:
    function = WEATHER_TOOL["function"]
    first, problem = client_tool(
        function["name"], function["description"], copy.deepcopy(function["parameters"])
    )
    assert problem is None
    validate_arguments(first, {"city": "Paris"})
    compiled = len(argument_validation._compiled)

    again, _ = client_tool(function["name"], function["description"], copy.deepcopy(function["parameters"]))
    validate_arguments(again, {"city": "Lyon"})

    assert again is first
    assert len(argument_validation._compiled) == compiled  # the schema was not compiled a second time


def test_a_changed_definition_is_a_new_tool_and_a_bad_schema_stays_bad() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool, _ = client_tool("lookup", "", schema)
    described, _ = client_tool("lookup", "Looks a city up.", schema)
    assert described is not tool
    assert described.description == "Looks a city up."

    broken = {"type": "object", "properties": {"city": {"type": 12}}}
    for _ in range(2):
        _, problem = client_tool("lookup", "", copy.deepcopy(broken))
        assert problem is not None
        assert "12" in problem


def _checked_in(definitions: list[Definition]) -> tuple[list[Built], set[threading.Thread]]:
    """The built tools, and the threads their schemas were checked in."""
    threads: set[threading.Thread] = set()

    def recording(schema: dict[str, Any]) -> str | None:
        threads.add(threading.current_thread())
        return schema_problem(schema)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(client_tools_module, "schema_problem", recording)
        return anyio.run(client_tools, definitions), threads


def test_many_new_definitions_are_checked_off_the_event_loop_and_then_known() -> None:
    schema = copy.deepcopy(WEATHER_TOOL["function"]["parameters"])
    run = uuid.uuid4().hex  # definitions no earlier test made known
    definitions: list[Definition] = [(f"tool_{n}_{run}", "d" * 100, schema) for n in range(512)]

    built, threads = _checked_in(definitions)
    assert [tool.name for tool, _ in built] == [name for name, _, _ in definitions]
    assert all(problem is None for _, problem in built)
    assert threads
    assert threading.main_thread() not in threads

    again, threads = _checked_in(definitions)
    assert [tool for tool, _ in again] == [tool for tool, _ in built]
    assert threads == set()  # known: not checked again

    few, threads = _checked_in([(f"one_{run}", "", schema)])
    assert few[0][1] is None
    assert threads == {threading.main_thread()}  # small: a thread would cost more than the check
