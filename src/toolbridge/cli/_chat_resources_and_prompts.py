"""Resources and prompts in `chat`: `@server:uri` attaches a resource to the message, `/prompts` lists
the servers' prompts, `/prompt NAME key=value ...` sends one; Tab completes all of these."""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable, Sequence

from rich.markup import escape

from toolbridge.cli._common import stderr, stdout
from toolbridge.cli._session import TerminalSession
from toolbridge.errors import ToolbridgeError
from toolbridge.tools import ContentCatalog
from toolbridge.types import AssistantMessage, ContentPart, ResourcePart, UserMessage

__all__ = ["ChatCompleter", "attachment_refs", "list_prompts", "send_message", "send_prompt"]

_REFERENCE = re.compile(r"(?<!\S)@([\w.-]+):(\S+)")


def attachment_refs(line: str, servers: Sequence[str]) -> list[tuple[str, str]]:
    """The `@server:uri` references in `line` that name one of `servers` (others are left as text)."""
    return [(server, uri) for server, uri in _REFERENCE.findall(line) if server in servers]


def send_message(session: TerminalSession, line: str, *, quiet: bool = False) -> None:
    """Ask `line`, with the resources it references attached; a resource that cannot be read stops it.

    `quiet`: say nothing on stdout (it carries the events as JSON lines)."""
    refs = attachment_refs(line, session.servers)
    attachments: list[ContentPart] = []
    for server, uri in refs:
        try:
            attachments += session.with_content(
                _reader(uri, server, session.agent.definition.max_result_chars)
            )
        except ToolbridgeError as exc:
            stderr.print(
                f"[bold red]error:[/] cannot attach @{escape(server)}:{escape(uri)}: {escape(str(exc))}"
            )
            stderr.print("The message was not sent; fix the reference or leave it out.", markup=False)
            return
    if refs and not quiet:
        names = ", ".join(f"{uri} ({server})" for server, uri in refs)
        stdout.print(f"[dim]Attached {escape(names)}[/]")
    session.turn(line, attachments=attachments)


def _reader(
    uri: str, server: str, max_chars: int
) -> Callable[[ContentCatalog], Awaitable[list[ResourcePart]]]:
    async def read(content: ContentCatalog) -> list[ResourcePart]:
        # Bounded as tool results are: the message, attachments and all, is stored and sent every turn.
        return await content.attach(uri, server=server, max_chars=max_chars)

    return read


def list_prompts(session: TerminalSession, argument: str) -> None:
    listing = session.with_content(lambda content: content.prompts())
    found = listing.items
    for name, error in listing.errors.items():
        stderr.print(
            f"[yellow]warning:[/] server {escape(name)!r} could not list its prompts: {escape(error)}"
        )
    if not found:
        stdout.print("No server of this chat offers prompts.")
    for prompt in found:
        arguments = " ".join(
            f"{argument.name}=…" if argument.required else f"[{argument.name}=…]"
            for argument in prompt.arguments
        )
        about = prompt.description or prompt.title or ""
        stdout.print(
            f"  [bold]{escape(prompt.name)}[/] {escape(arguments)} [dim]({escape(prompt.server)})[/]  {escape(about)}"
        )


def send_prompt(session: TerminalSession, argument: str) -> None:
    """`/prompt NAME key=value ...`: the prompt's messages start (or continue) the chat; a last user
    message is asked at once, a last assistant message is shown and waits for your reply."""
    try:
        words = shlex.split(argument)
    except ValueError as exc:
        stderr.print(f"[bold red]error:[/] cannot read the arguments: {escape(str(exc))}")
        return
    if not words:
        stderr.print("usage: /prompt NAME key=value ... (/prompts lists them)", markup=False)
        return
    name, pairs = words[0], words[1:]
    malformed = [pair for pair in pairs if "=" not in pair]
    if malformed:
        stderr.print(
            f"[bold red]error:[/] {escape(malformed[0])!r} is not key=value; write e.g. code='x = 1'."
        )
        return
    arguments = dict(pair.split("=", 1) for pair in pairs)
    server, _, bare = name.rpartition(":")
    try:
        got = session.with_content(lambda content: content.get_prompt(bare, arguments, server=server or None))
    except ToolbridgeError as exc:
        stderr.print(f"[bold red]error:[/] {escape(str(exc))}")
        return
    if not got.messages:
        stderr.print(f"The prompt {bare!r} has no messages.", markup=False)
        return
    *opening, last = got.messages
    for message in opening:
        if isinstance(message, UserMessage | AssistantMessage):
            who = "you" if isinstance(message, UserMessage) else "assistant"
            stdout.print(f"[dim]{who} (prompt):[/] {escape(message.content)}")
    if isinstance(last, UserMessage):
        stdout.print(f"[dim]you (prompt {escape(bare)}):[/] {escape(last.content)}")
        session.turn(last.content, attachments=last.attachments, opening=opening)
    else:
        assert isinstance(last, AssistantMessage)
        stdout.print(f"[dim]assistant (prompt):[/] {escape(last.content)}")
        session.open_with(got.messages)


class ChatCompleter:
    """Tab completion for readline: `@server:` and resource URIs (template values through the server's
    completion), chat commands, prompt names and prompt argument values."""

    def __init__(self, session: TerminalSession, commands: Sequence[str]) -> None:
        self._session = session
        self._commands = list(commands)
        self._matches: list[str] = []

    def complete(self, text: str, state: int) -> str | None:
        if state == 0:
            try:
                import readline

                line = readline.get_line_buffer()[: readline.get_endidx()]
                self._matches = self.candidates(line, text)
            except Exception:  # a completer must never break the prompt
                self._matches = []
        return self._matches[state] if state < len(self._matches) else None

    def candidates(self, line: str, word: str) -> list[str]:
        """What `word` (the last word of `line` so far) may become."""
        if word.startswith("@"):
            return self._resource_candidates(word[1:])
        if line.startswith("/prompt ") and line.count(" ") == 1:
            return self._session.with_content(lambda content: _prompt_names(content, word))
        if line.startswith("/prompt ") and "=" in word:
            prompt = line.split()[1]
            key, _, value = word.partition("=")
            values = self._session.with_content(lambda content: _prompt_values(content, prompt, key, value))
            return [f"{key}={found}" for found in values]
        if line == word and word.startswith("/"):
            return [command for command in self._commands if command.startswith(word)]
        return []

    def _resource_candidates(self, typed: str) -> list[str]:
        servers = self._session.servers
        if ":" not in typed:
            return [f"@{name}:" for name in servers if name.startswith(typed)]
        server, _, partial = typed.partition(":")
        if server not in servers:
            return []
        uris = self._session.with_content(lambda content: _uris(content, server, partial))
        return [f"@{server}:{uri}" for uri in uris]


async def _uris(content: ContentCatalog, server: str, partial: str) -> list[str]:
    listed = await content.resources(server)
    found = [resource.uri for resource in listed.items if resource.uri.startswith(partial)]
    templates = await content.templates(server)
    for template in templates.items:
        prefix, brace, rest = template.uri_template.partition("{")
        if not brace:
            continue
        if prefix.startswith(partial) and prefix != partial:
            found.append(prefix)
        elif partial.startswith(prefix):
            variable = rest.split("}", 1)[0].lstrip("+#./;?&").split(",")[0]
            typed = partial[len(prefix) :]
            values = await content.server(server).complete_template_argument(
                template.uri_template, variable, typed
            )
            found += [prefix + value for value in values]
    return sorted(dict.fromkeys(found))


async def _prompt_names(content: ContentCatalog, typed: str) -> list[str]:
    listing = await content.prompts()
    return sorted({p.name for p in listing.items if p.name.startswith(typed)})


async def _prompt_values(content: ContentCatalog, prompt: str, key: str, value: str) -> list[str]:
    listing = await content.prompts()
    owner = next((p for p in listing.items if p.name == prompt), None)
    if owner is None:
        return []
    if not any(argument.name == key for argument in owner.arguments):
        return []
    return await content.server(owner.server).complete_prompt_argument(prompt, key, value)
