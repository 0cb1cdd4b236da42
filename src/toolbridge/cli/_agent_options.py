"""Options shared by the commands that talk to an agent (`ask`, `chat`)."""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from toolbridge.cli._common import fail
from toolbridge.types import AudioPart, ContentPart, ImagePart, ResourcePart

AgentOption = Annotated[
    str | None,
    typer.Option("--agent", help="Agent from the config's 'agents' section (default: default)."),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="Model: a name from the config's 'models', provider:model (e.g. ollama:qwen3), or demo.",
    ),
]
ContinueOption = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the last chat (`toolbridge history` lists them).")
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Approve every tool call without asking.")]
SystemOption = Annotated[
    str | None,
    typer.Option(
        "--system", "-s", help="Instructions for this run, in place of the agent's own.", show_default=False
    ),
]
ModelOptionsOption = Annotated[
    list[str] | None,  # KEY VALUE pairs in fact: see `PairedOptions`
    typer.Option(
        "--option",
        "-o",
        metavar="KEY VALUE",
        help="A model option for this run, e.g. -o temperature 0.2 (repeat; also max_tokens, top_p, seed).",
        show_default=False,
    ),
]


LogOption = Annotated[
    bool | None,
    typer.Option(
        "--log/--no-log",
        " /-n",
        help="Store this chat even with `history off` (--log), or not at all (-n/--no-log).",
        show_default=False,
    ),
]


AttachmentOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--attachment",
        "-a",
        metavar="FILE",
        help="A file to send with the question: an image, audio or a text file (repeat for more).",
        show_default=False,
    ),
]


def keeps_chat(log: bool | None, *, continuing: str | None = None) -> bool:
    """Whether this command stores its chat: `--log` / `--no-log`, else `toolbridge history on|off`.
    `continuing` names the option that continues a stored chat (`-c`): with history off and neither
    flag, that is refused, saying how to turn history on."""
    from toolbridge.cli._history_setting import keeps_chat as setting_says
    from toolbridge.errors import ToolbridgeError

    try:
        keep = setting_says(log)
    except ToolbridgeError as error:
        fail(str(error))
    if continuing and log is None and not keep:
        fail(
            f"history is off (`toolbridge history off`), so {continuing} has no stored chat to continue: "
            "turn it on with `toolbridge history on`, or add --log to continue the last chat and store this"
        )
    return keep


MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
"""What one file may weigh: more than a model's API takes in one request anyway."""


def read_attachments(paths: Sequence[Path] | None) -> list[ContentPart]:
    """`-a` files as content parts: images and audio as themselves, text as an embedded resource (named
    by its file URI). Anything else, or a file that cannot be read, exits saying which and why."""
    parts: list[ContentPart] = []
    for path in paths or []:
        try:
            size = path.stat().st_size
            if size > MAX_ATTACHMENT_BYTES:
                fail(f"-a {path}: {size:,} bytes is more than the {MAX_ATTACHMENT_BYTES:,} a file may have")
            data = path.read_bytes()
        except OSError as error:
            fail(f"-a {path}: cannot read it ({error.strerror or error}); give a file that exists")
        mime, _ = mimetypes.guess_type(path.name)
        if mime is not None and mime.startswith("image/"):
            parts.append(ImagePart(data=base64.b64encode(data).decode(), mime_type=mime))
        elif mime is not None and mime.startswith("audio/"):
            parts.append(AudioPart(data=base64.b64encode(data).decode(), mime_type=mime))
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                fail(
                    f"-a {path}: not an image, audio or UTF-8 text ({mime or 'unknown type'}); attach one of those"
                )
            uri = path.resolve().as_uri()
            parts.append(ResourcePart(uri=uri, mime_type=mime or "text/plain", text=text))
    return parts


class PairedOptions(TyperCommand):
    """A command whose `-o` takes two words, as `llm -o temperature 0.2` does. Typer has no repeated
    pairs, so the option is made one here: two words each time, kept as (key, value) tuples."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for parameter in self.params:
            if parameter.name == "option":
                parameter.nargs = 2
                parameter.process_value = lambda _ctx, value: [tuple(pair) for pair in value or ()]  # type: ignore[method-assign,assignment]


_MODEL_OPTIONS: dict[str, type] = {"temperature": float, "max_tokens": int, "top_p": float, "seed": int}
"""What `-o` sets: the model's own settings (`ModelSettings`), by the names a config's model entry uses."""


def model_options(given: Sequence[Sequence[str]] | None) -> dict[str, Any]:
    """`-o KEY VALUE` pairs as settings; an unknown key or a value of the wrong kind exits with the ones
    that exist."""
    options: dict[str, Any] = {}
    for key, value in given or []:
        kind = _MODEL_OPTIONS.get(key)
        if kind is None:
            fail(f"-o {key}: unknown model option; use one of {', '.join(_MODEL_OPTIONS)}")
        try:
            options[key] = kind(value)
        except ValueError:
            fail(f"-o {key} {value}: expected {'a number' if kind is float else 'a whole number'}")
    return options
