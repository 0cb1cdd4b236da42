"""The neutral tool model used everywhere: what a tool is, a call to it, and what it returned.

Every layer speaks these types. MCP SDK types are converted to them in `toolbridge.mcp`, and each
model provider converts them to and from its own wire format inside its adapter, nowhere else.
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "NATIVE_SOURCE",
    "QUALIFIER",
    "AssistantMessage",
    "AudioPart",
    "Caller",
    "ContentPart",
    "ImagePart",
    "Message",
    "ResourcePart",
    "RunToolMode",
    "SystemMessage",
    "TextPart",
    "ToolAnnotations",
    "ToolAudience",
    "ToolCall",
    "ToolErrorKind",
    "ToolMessage",
    "ToolMode",
    "ToolModeSetting",
    "ToolResult",
    "ToolSearchSetting",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "bare_name",
    "qualified_name",
    "split_qualified",
]

NATIVE_SOURCE = "native"
"""The `source` of tools implemented in Python inside this process."""

QUALIFIER = "__"
"""Joins a source and a tool name in an exposed name: `excel__read_data`. Server names never contain it,
so the first one in a name ends its source."""


def qualified_name(source: str, name: str) -> str:
    """`name` qualified by its source: `excel__read_data`."""
    return f"{source}{QUALIFIER}{name}"


def split_qualified(name: str) -> tuple[str, str] | None:
    """The source and the name in a qualified name (`excel__read_data`: `("excel", "read_data")`); None
    for a name that is not qualified."""
    source, qualifier, rest = name.partition(QUALIFIER)
    return (source, rest) if qualifier and source and rest else None


def bare_name(name: str) -> str:
    """A name without the source that may qualify it: `read_data` for `excel__read_data` and for
    `read_data`."""
    split = split_qualified(name)
    return split[1] if split else name


ToolMode = Literal["native", "prompt"]
"""How tools reach a model. `native`: through the API's function calling. `prompt`: the tool catalog in
the system prompt, calls parsed from the text."""

ToolModeSetting = Literal[ToolMode, "auto", "code"]
"""The tool mode a model or an agent is configured with; `auto`: native where the endpoint accepts
tools, else prompt; `code`: the model is offered `run_code` and calls the tools from Python
(`toolbridge.tools.code_mode`), `run_code` itself reaching the model as in `auto`."""

ToolSearchSetting = bool | Literal["auto"]
"""Whether a model is offered `search_tools` in place of many tools (`toolbridge.tools.search`); `auto`:
when there are more than 40 of them or about 10,000 tokens."""

RunToolMode = Literal[ToolMode, "none"]
"""How a run offers its tools; `none`: it has none to offer."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Model):
    type: Literal["text"] = "text"
    text: str


class ImagePart(_Model):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded bytes."""
    mime_type: str


class AudioPart(_Model):
    type: Literal["audio"] = "audio"
    data: str
    """Base64-encoded bytes."""
    mime_type: str


class ResourcePart(_Model):
    """An embedded resource (or a link to one, when neither `text` nor `blob` is set)."""

    type: Literal["resource"] = "resource"
    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    """Base64-encoded bytes."""


ContentPart = Annotated[TextPart | ImagePart | AudioPart | ResourcePart, Field(discriminator="type")]


class ToolAnnotations(_Model):
    """MCP's behaviour hints. They are hints from the server, not guarantees."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    @property
    def safe_to_retry(self) -> bool:
        """Whether running the call twice does no harm, so a call lost with its transport may be resent."""
        return bool(self.read_only_hint or self.idempotent_hint)


ToolAudience = Literal["model", "app"]
"""Who may see and call a tool (MCP Apps' `_meta.ui.visibility`): the model, an app's UI on the page of a
host that shows MCP Apps."""


class ToolSpec(_Model):
    """A tool's full definition, as the model is told about it."""

    name: str
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    source: str = NATIVE_SOURCE
    """The id of the MCP server that has the tool, or `native`."""
    original_name: str | None = None
    """The name its source gives the tool, when it is exposed under another one (`delete_file` for
    `h__delete_file`, after a collision); None: the same as `name`. Config rules match this name."""
    visibility: tuple[ToolAudience, ...] = ("model", "app")
    """Who may see and call it (MCP Apps): a tool only for an app's UI is never offered to a model."""


_CALL_ID_PREFIX = f"call_{uuid.uuid4().hex[:6]}"
_call_numbers = itertools.count(1)


def _new_call_id() -> str:
    # A random prefix per process and a counter: unique here, and a uuid per call cost more than the rest.
    return f"{_CALL_ID_PREFIX}{next(_call_numbers):06x}"


class ToolCall(_Model):
    """A request to run a tool, as a model wrote it."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str = Field(default_factory=_new_call_id)
    source: str | None = None
    """Where the model says the tool lives; a hint only, routing checks it."""


Caller = Literal["agent", "gateway", "openapi", "cli", "library"]
"""Who makes a call: an agent's run (`ask`, `chat`, the web page, `/v1`), an MCP client of the gateway,
an HTTP client of `POST /tools/{name}` (`openapi`), `toolbridge call` (`cli`), or a program (`library`)."""


ToolErrorKind = Literal[
    "timeout",
    "invalid_arguments",
    "cut_off",
    "unknown_tool",
    "server_error",
    "server_unavailable",
    "cancelled",
    "denied",
    "not_allowed",
]
"""Why a call failed, set where it failed, so logs and statistics never read it from message text:

- `timeout`: the tool did not answer in time and was stopped;
- `invalid_arguments`: the arguments did not match the tool's schema (or could not be read);
- `cut_off`: the model's reply ended at its token limit inside the call, so it never ran;
- `unknown_tool`: no tool by that name (or an ambiguous name);
- `server_error`: the tool or its server reported a failure (an MCP `isError` result, a JSON-RPC error);
- `server_unavailable`: the server could not be reached, started, or its connection was lost;
- `cancelled`: the run was stopped before the call finished (or before it started);
- `denied`: the call needed approval and the user declined it (or nobody could be asked);
- `not_allowed`: the tool exists, but this caller may not use it (an agent's tool rules, a token's reach).
"""


class ToolResult(_Model):
    """What a tool call produced. Errors a model can fix are results too, with `is_error` set."""

    call_id: str
    content: list[ContentPart] = Field(default_factory=list)
    structured_content: dict[str, Any] | None = None
    is_error: bool = False
    server: str | None = None
    """The server of the tool the call was for (`native` for Python tools), also when its arguments were
    refused before it ran; None when no tool matched."""
    duration: float = 0.0
    """Seconds from sending the call to its result."""
    notes: list[str] = Field(default_factory=list)
    """What toolbridge did on the way, for the model and the user (coerced arguments, a retry)."""
    cached: bool = False
    """Served from the result cache rather than by running the tool."""
    error_kind: ToolErrorKind | None = None
    """Why the call failed, when toolbridge knows; None for success. A tool's own error result
    (`is_error` from the tool) is `server_error`."""

    @classmethod
    def error(
        cls,
        call_id: str,
        message: str,
        *,
        kind: ToolErrorKind,
        server: str | None = None,
        duration: float = 0.0,
    ) -> ToolResult:
        return cls(
            call_id=call_id,
            content=[TextPart(text=message)],
            is_error=True,
            server=server,
            duration=duration,
            error_kind=kind,
        )

    @property
    def text(self) -> str:
        """The result as one string: text parts, then structured content, with other parts summarized."""
        pieces: list[str] = [*self.notes]
        for part in self.content:
            if isinstance(part, TextPart):
                pieces.append(part.text)
            elif isinstance(part, ResourcePart):
                pieces.append(part.text if part.text is not None else f"[resource {part.uri}]")
            else:
                pieces.append(f"[{part.type} {part.mime_type}, {len(part.data) * 3 // 4} bytes]")
        if self.structured_content is not None and not any(isinstance(p, TextPart) for p in self.content):
            pieces.append(json.dumps(self.structured_content, ensure_ascii=False))
        return "\n".join(pieces)

    def truncated(self, limit: int, *, size: int | None = None) -> tuple[ToolResult, int]:
        """The result cut to `limit` characters of its text, with a note saying how much was cut and
        what to do, and how many characters were cut (0: the result as it is). `size`: how many
        characters the result takes where more than its text counts (media, structured content,
        as the gateway sends them); over `limit`, the result becomes its text, media summarized."""
        text = self.text
        size = len(text) if size is None else size
        if size <= limit:
            return self, 0
        kept = text[:limit]
        cut = size - len(kept)
        note = (
            f"\n[Result truncated: {cut:,} of {size:,} characters were cut. "
            "If you need the rest, ask the tool for a smaller part.]"
        )
        update = {"content": [TextPart(text=kept + note)], "structured_content": None, "notes": []}
        return self.model_copy(update=update), cut


# -- conversation -----------------------------------------------------------------------------------


class SystemMessage(_Model):
    role: Literal["system"] = "system"
    content: str


class UserMessage(_Model):
    role: Literal["user"] = "user"
    content: str
    attachments: list[ContentPart] = Field(default_factory=list)
    """What the user attached to the message (resources read from a server, images): each model
    adapter sends them as content parts its API takes (see `models/_attachments.py`)."""


class AssistantMessage(_Model):
    """A model's reply: its text, its reasoning (never shown as content), and the calls it made."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolMessage(_Model):
    """The result of one call, sent back to the model."""

    role: Literal["tool"] = "tool"
    name: str
    """The tool's name as the model called it."""
    result: ToolResult


Message = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]


class Usage(_Model):
    """Tokens a model call consumed, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )
