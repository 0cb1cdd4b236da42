"""What `ServerContent` returns: a server's resources, templates and prompts as toolbridge's values."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from toolbridge.types import Message

__all__ = ["PromptArgumentInfo", "PromptInfo", "PromptMessages", "ResourceInfo", "ResourceTemplateInfo"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ResourceInfo(_Model):
    server: str
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    """Bytes, when the server says."""


class ResourceTemplateInfo(_Model):
    """A family of resources: `uri_template` (RFC 6570) with `{variables}` to fill in."""

    server: str
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


class PromptArgumentInfo(_Model):
    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


class PromptInfo(_Model):
    server: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgumentInfo] = Field(default_factory=list)


class PromptMessages(_Model):
    """What `prompts/get` returned, as messages that can start (or continue) a conversation."""

    server: str
    name: str
    description: str | None = None
    messages: list[Message] = Field(default_factory=list)
