"""One matcher for every config rule that names a tool: the tool's own name, `server__tool`,
`server:tool`, and globs over them, whatever name a collision exposes the tool under."""

from __future__ import annotations

import pytest

from toolbridge.config import ApprovalPolicy, ToolFilter, ToolRef
from toolbridge.config.tool_rules import allowed, rule_for
from toolbridge.types import ToolSpec

# `delete_file` of server `h`, exposed as `h__delete_file` because another server has one too.
RENAMED = ToolSpec(name="h__delete_file", original_name="delete_file", source="h")
PLAIN = ToolSpec(name="delete_file", source="h")
OTHER = ToolSpec(name="files__delete_file", original_name="delete_file", source="files")


@pytest.mark.parametrize("spec", [RENAMED, PLAIN])
@pytest.mark.parametrize(
    "pattern", ["delete_file", "h__delete_file", "h:delete_file", "delete_*", "h:*", "*__delete_file", "*"]
)
def test_every_form_of_a_name_matches_the_tool_whatever_it_is_exposed_as(
    spec: ToolSpec, pattern: str
) -> None:
    assert ToolRef.of(spec).matches(pattern)


@pytest.mark.parametrize("pattern", ["files:delete_file", "files__delete_file", "h", "read_file", "h:read_*"])
def test_a_name_of_another_tool_or_server_does_not_match(pattern: str) -> None:
    assert not ToolRef.of(RENAMED).matches(pattern)


def test_a_rule_with_the_server_beats_a_bare_name_beats_a_pattern() -> None:
    rules = {"*": "pattern", "delete_file": "bare", "h:delete_file": "qualified"}
    assert rule_for(rules, ToolRef.of(RENAMED)) == ("h:delete_file", "qualified")
    assert rule_for(rules, ToolRef.of(OTHER)) == ("delete_file", "bare")
    assert rule_for({"read_*": 1, "delete_*": 2, "*": 3}, ToolRef.of(RENAMED)) == ("delete_*", 2)
    assert rule_for({"read_*": 1}, ToolRef.of(RENAMED)) is None


def test_allow_and_deny_follow_the_tool() -> None:
    ref = ToolRef.of(RENAMED)
    assert not allowed(ref, None, ["delete_file"])
    assert not allowed(ref, ["*"], ["h:*"])
    assert allowed(ref, ["h__delete_file"], ["files:*"])
    assert not allowed(ref, ["read_*"], [])


def test_an_agent_rule_for_the_own_name_applies_to_the_renamed_tool() -> None:
    policy = ApprovalPolicy(tools={"delete_file": "always"})
    assert policy.approval_reason(RENAMED) == "the approval rule for tool 'delete_file' says 'always'"
    only_h = ApprovalPolicy(tools={"h:delete_file": "always"})
    assert only_h.approval_reason(RENAMED) is not None
    assert only_h.approval_reason(OTHER) is None
    assert not ToolFilter(deny=["delete_file"]).allows(RENAMED)
    assert ToolFilter(deny=["h__delete_file"]).allows(OTHER)
