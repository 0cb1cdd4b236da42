"""Agents: create, read, list, update (and rename), delete; duplicates and unknown names are clear errors."""

from __future__ import annotations

import pytest

from toolbridge.agent.definition import AgentDefinition, ApprovalPolicy, ToolFilter
from toolbridge.store import AgentExistsError, AgentNotFoundError, Store

HELPER = AgentDefinition(
    name="excel-helper",
    description="Answers questions about spreadsheets.",
    instructions="Be brief. Quote the cells you used.",
    model="gpt-4o",
    tool_calling=True,
    tool_mode="prompt",
    servers=["excel"],
    tools=ToolFilter(allow=["read_*"], deny=["delete_*"]),
    max_steps=7,
    call_timeout=12.5,
    approval=ApprovalPolicy(default="always", servers={"excel": "never"}, tools={"write_*": "always"}),
)


def test_agent_crud(store: Store, db_url: str) -> None:
    created = store.create_agent(HELPER)
    assert created.name == "excel-helper"
    assert created.definition == HELPER
    store.create_agent(AgentDefinition(name="chatty", tool_calling=False))

    assert store.has_agent("excel-helper")
    assert not store.has_agent("excel")
    with Store(db_url) as reopened:
        assert reopened.get_agent("excel-helper").definition == HELPER
        assert [record.name for record in reopened.list_agents()] == ["chatty", "excel-helper"]

    changed = HELPER.model_copy(update={"model": "claude-sonnet", "max_steps": 3})
    updated = store.update_agent("excel-helper", changed)
    assert updated.definition == changed
    assert updated.created_at == created.created_at
    assert updated.updated_at > created.updated_at

    renamed = store.update_agent("excel-helper", changed.model_copy(update={"name": "sheets"}))
    assert renamed.name == "sheets"
    with pytest.raises(AgentNotFoundError):
        store.get_agent("excel-helper")
    assert (store.has_agent("excel-helper"), store.has_agent("sheets")) == (False, True)

    store.delete_agent("sheets")
    assert [record.name for record in store.list_agents()] == ["chatty"]


def test_duplicate_and_unknown_agents_say_what_to_do(store: Store) -> None:
    store.create_agent(HELPER)
    store.create_agent(AgentDefinition(name="other"))
    with pytest.raises(AgentExistsError, match="toolbridge agents edit excel-helper"):
        store.create_agent(HELPER)
    with pytest.raises(AgentExistsError):
        store.update_agent("other", HELPER)  # renaming onto a taken name
    with pytest.raises(AgentNotFoundError, match="toolbridge agents"):
        store.get_agent("nobody")
    with pytest.raises(AgentNotFoundError):
        store.delete_agent("nobody")
    with pytest.raises(AgentNotFoundError):
        store.update_agent("nobody", HELPER)
    assert store.get_agent("other").definition == AgentDefinition(name="other")


def test_records_serialize_for_the_http_api(store: Store) -> None:
    record = store.create_agent(HELPER)
    document = record.model_dump(mode="json")
    assert document["name"] == "excel-helper"
    assert document["definition"]["tools"] == {"allow": ["read_*"], "deny": ["delete_*"]}
