"""MCP Apps: which calls an app's UI may make.

A tool's server says who may see and call it (`_meta.ui.visibility`, kept as `ToolSpec.visibility`). A
model is never offered a tool hidden from models (`AgentDefinition.select_tools`, `why_not_offered`);
an app may call only tools shown to apps. toolbridge shows no app UI itself (the CLI, the page and `/v1`
have no app host), so an app's call reaches it only from a program that hosts apps on toolbridge's
library and says so with `CallContext(allows=app_may_call)`. A gateway client that hosts apps enforces
visibility for its own apps, as MCP Apps asks of every host: the gateway cannot tell an app's call from
a model's on the wire.
"""

from __future__ import annotations

from toolbridge.types import ToolSpec

__all__ = ["HIDDEN_FROM_APPS", "app_may_call"]

HIDDEN_FROM_APPS = "its server does not let an app's UI call it (MCP Apps visibility); only the model may"


def app_may_call(tool: ToolSpec) -> str | None:
    """A `ToolFilter` for calls an app's UI makes: why it may not call `tool`, or None when it may."""
    return None if "app" in tool.visibility else HIDDEN_FROM_APPS
