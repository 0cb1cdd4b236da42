"""`ContentCatalog`: the resources and prompts of every server of a toolbox, found by URI or name.

```python
async with Toolbox(load_config()) as toolbox:
    listing = await toolbox.content.resources()          # every enabled server's, with errors apart
    parts = await toolbox.content.read("note://readme")  # the server is found from the listings
    parts = await toolbox.content.attach("note://readme")  # the same, bounded to go with a message
    prompt = await toolbox.content.get_prompt("review", {"code": "x = 1"})
    result = await agent.run("Summarize it.", attachments=parts)
```
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import anyio

from toolbridge.config.agents import DEFAULT_MAX_RESULT_CHARS
from toolbridge.errors import ServerError, UsageError
from toolbridge.mcp import (
    PromptInfo,
    PromptMessages,
    ResourceInfo,
    ResourceTemplateInfo,
    ServerContent,
    ServerPool,
)
from toolbridge.types import ResourcePart

__all__ = ["MAX_ATTACHED_BYTES", "ContentCatalog", "Listing", "bounded_attachment", "template_pattern"]

T = TypeVar("T")

MAX_ATTACHED_BYTES = 5 * 1024 * 1024
"""The most binary content (decoded) one attached resource may carry: an attachment is stored with its
message and sent again with every later turn, and bytes cannot be cut the way text is."""


@dataclass
class Listing(Generic[T]):
    """Items from several servers, in config order; servers that could not be asked are in `errors`."""

    items: list[T] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


class ContentCatalog:
    """The resources and prompts of a pool's enabled servers (it is `toolbox.content`)."""

    def __init__(self, pool: ServerPool, *, servers: Sequence[str] | None = None) -> None:
        self._pool = pool
        self._servers = servers

    def only(self, servers: Sequence[str] | None) -> ContentCatalog:
        """The same, limited to `servers` (an agent's); None: every enabled server."""
        return ContentCatalog(self._pool, servers=servers)

    @property
    def server_names(self) -> list[str]:
        """The enabled servers this catalog looks through."""
        enabled = self._pool.enabled_names
        return enabled if self._servers is None else [name for name in enabled if name in self._servers]

    def server(self, name: str) -> ServerContent:
        return self._pool.connection(name).content

    async def resources(self, server: str | None = None) -> Listing[ResourceInfo]:
        return await self._gather(server, lambda content: content.list_resources())

    async def templates(self, server: str | None = None) -> Listing[ResourceTemplateInfo]:
        return await self._gather(server, lambda content: content.list_resource_templates())

    async def prompts(self, server: str | None = None) -> Listing[PromptInfo]:
        return await self._gather(server, lambda content: content.list_prompts())

    async def read(self, uri: str, *, server: str | None = None) -> list[ResourcePart]:
        """Read `uri` from `server`, or from the server that lists it (or has a template it matches)."""
        return await self.server(server or await self.server_of(uri)).read_resource(uri)

    async def attach(
        self, uri: str, *, server: str | None = None, max_chars: int = DEFAULT_MAX_RESULT_CHARS
    ) -> list[ResourcePart]:
        """`read`, bounded to go with a message (see `bounded_attachment`)."""
        return bounded_attachment(uri, await self.read(uri, server=server), max_chars)

    async def server_of(self, uri: str) -> str:
        """The server that lists `uri`, else the one whose template matches it, else the only server."""
        listed = await self.resources()
        for resource in listed.items:
            if resource.uri == uri:
                return resource.server
        templates = await self.templates()
        for template in templates.items:
            if template_pattern(template.uri_template).fullmatch(uri):
                return template.server
        enabled = self.server_names
        if len(enabled) == 1:
            return enabled[0]
        unreachable = sorted({*listed.errors, *templates.errors})
        why = f" (could not ask {', '.join(unreachable)})" if unreachable else ""
        raise UsageError(
            f"No server lists the resource {uri!r}{why}; name the server (--server S, or @server:uri in chat)."
        )

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, server: str | None = None
    ) -> PromptMessages:
        """The prompt's messages, from `server` or from the server that lists a prompt of that name."""
        if server is None:
            listing = await self.prompts()
            owners = [prompt.server for prompt in listing.items if prompt.name == name]
            if not owners:
                known = ", ".join(sorted({p.name for p in listing.items})) or "none"
                raise UsageError(f"No server has a prompt named {name!r} (prompts: {known}).")
            if len(owners) > 1:
                raise UsageError(
                    f"Several servers have a prompt named {name!r} ({', '.join(owners)}); name the server."
                )
            server = owners[0]
        return await self.server(server).get_prompt(name, arguments)

    async def _gather(
        self, server: str | None, fetch: Callable[[ServerContent], Awaitable[list[T]]]
    ) -> Listing[T]:
        names = [server] if server else self.server_names
        found: dict[str, list[T]] = {}
        errors: dict[str, str] = {}

        async def one(name: str) -> None:
            try:
                found[name] = await fetch(self.server(name))
            except ServerError as exc:
                errors[name] = str(exc)

        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(one, name)
        return Listing([item for name in names for item in found.get(name, [])], errors)


def template_pattern(uri_template: str) -> re.Pattern[str]:
    """A regex for the URIs an RFC 6570 template makes: `{x}` is one path segment, `{+x}` anything."""
    pieces: list[str] = []
    position = 0
    for match in re.finditer(r"\{([+#./;?&]?)[^}]*\}", uri_template):
        pieces.append(re.escape(uri_template[position : match.start()]))
        pieces.append(".+" if match.group(1) in ("+", "#") else "[^/]+")
        position = match.end()
    pieces.append(re.escape(uri_template[position:]))
    return re.compile("".join(pieces))


def bounded_attachment(uri: str, parts: Sequence[ResourcePart], max_chars: int) -> list[ResourcePart]:
    """A resource's parts bounded as tool results are: text beyond `max_chars` (over all its parts) is
    cut, with a note saying so and how to get the rest. Binary content cannot be cut: more than
    `MAX_ATTACHED_BYTES` of it raises `UsageError`."""
    binary = sum(len(part.blob) * 3 // 4 - part.blob.count("=", -2) for part in parts if part.blob)
    if binary > MAX_ATTACHED_BYTES:
        raise UsageError(
            f"the resource holds {binary:,} bytes of binary content, more than the "
            f"{MAX_ATTACHED_BYTES:,} an attachment may carry (binary content cannot be cut); "
            "attach a smaller resource, or leave it for a tool to read"
        )
    total = sum(len(part.text) for part in parts if part.text is not None)
    if total <= max_chars:
        return list(parts)
    left = max_chars
    bounded: list[ResourcePart] = []
    for part in parts:
        if part.text is None:
            bounded.append(part)
            continue
        kept = part.text[:left]
        left -= len(kept)
        if kept:  # a text part wholly past the limit is left out
            bounded.append(part if len(kept) == len(part.text) else part.model_copy(update={"text": kept}))
    note = (
        f"\n[Attachment truncated: {total - max_chars:,} of {total:,} characters of {uri} were cut. "
        "If you need the rest, read it in smaller parts, with a tool or a narrower resource of its server.]"
    )
    texts = [i for i, part in enumerate(bounded) if part.text is not None]
    if not texts:
        return [*bounded, ResourcePart(uri=uri, mime_type="text/plain", text=note.lstrip())]
    last = bounded[texts[-1]]
    bounded[texts[-1]] = last.model_copy(update={"text": f"{last.text}{note}"})
    return bounded
