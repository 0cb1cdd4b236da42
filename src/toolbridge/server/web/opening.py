"""`Opening`: what a posted message becomes before its run starts."""

from __future__ import annotations

from pydantic import BaseModel, Field

from toolbridge.types import ContentPart, Message

__all__ = ["Opening"]


class Opening(BaseModel):
    """What a message turns into: the messages before the prompt (a server prompt's), the prompt, and
    what is attached to it. `prompt` None: the opening ends with the assistant's turn, no run."""

    before: list[Message] = Field(default_factory=list)
    prompt: str | None = None
    attachments: list[ContentPart] = Field(default_factory=list)
