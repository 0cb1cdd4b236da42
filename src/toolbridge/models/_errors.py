"""Turning a provider's HTTP failures into `ModelError`s that say what went wrong and what to do.

Both SDKs (openai, anthropic) fail the same ways: a status with a body, a refused or timed-out
connection, or an error event in the middle of a stream. The adapters catch their SDK's exceptions and
call these functions with what they found, so every provider words the same failure the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolbridge.errors import ModelError, ModelErrorKind, ToolsNotSupportedError
from toolbridge.models.provider_profiles import ProviderProfile

__all__ = [
    "CONTEXT_LENGTH_PHRASES",
    "TOOLS_NOT_SUPPORTED_PHRASES",
    "Endpoint",
    "connection_error",
    "cut_off_error",
    "error_code",
    "error_text",
    "says_context_too_long",
    "says_tools_not_supported",
    "status_error",
    "stream_error",
]

_MAX_SHOWN = 500

TOOLS_NOT_SUPPORTED_PHRASES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # Ollama, for a model whose template has no tools: `"gemma2:2b" does not support tools`
        # (older: `registry.ollama.ai/library/gemma2:2b does not support tools`). DeepSeek before V3.1:
        # "deepseek-reasoner does not support Function Calling". LM Studio and others: "... does not
        # support tool use" / "tool calling".
        r"(does not|doesn't|do not|don't|cannot|can't) support (tools|tool[ _-]?(use|calling|calls)|function[ _-]?call(ing|s)?|functions)\b",
        # vLLM started without tool parsing: `"auto" tool choice requires --enable-auto-tool-choice and
        # --tool-call-parser to be set`.
        r"requires --enable-auto-tool-choice",
        # vLLM before 0.6: "Currently only named tools are supported."
        r"only named tools are supported",
        # llama.cpp's llama-server without --jinja: "tools param requires --jinja flag";
        # before that: "Unsupported param: tools".
        r"tools param requires --jinja",
        r"unsupported param(eter)?:\s*'?(tools|tool_choice|functions)\b",
        # OpenAI (o1-preview era): "Unsupported parameter: 'tools' is not supported with this model."
        # TGI and proxies: "tools are not supported", "tool_choice is not supported".
        r"\b'?(tools|tool_choice|functions|function calling|tool calling)'? (is|are) not supported",
    )
)
"""What servers answer when a request carries tools the model or server cannot take."""

# 500: llama-server reports its "requires --jinja" as an internal error in some versions.
_TOOLS_REJECTED_STATUSES = frozenset({400, 422, 500})

CONTEXT_LENGTH_PHRASES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # OpenAI (older models), DeepSeek, vLLM: "This model's maximum context length is 8192 tokens.
        # However, your messages resulted in 9000 tokens." / "... your request has 40000 input tokens."
        r"maximum context length is \d+",
        # OpenAI (newer models): "Your input exceeds the context window of this model."
        r"exceeds? the context window",
        # Anthropic: "prompt is too long: 208656 tokens > 200000 maximum", and "input length and
        # `max_tokens` exceed context limit: 188240 + 21333 > 200000".
        r"prompt is too long: \d+ tokens",
        r"exceeds? context limit",
        # vLLM's input processing: "The decoder prompt (length 9254) is longer than the maximum model
        # length of 4096."
        r"longer than the maximum model length",
        # llama.cpp's llama-server: "request (4476 tokens) exceeds the available context size (4096
        # tokens), try increasing it"; older: "the request exceeds the available context size".
        r"exceeds the available context size",
        # Ollama (when it does not truncate): "the input length exceeds the context length".
        r"input length exceeds the context length",
    )
)
"""What servers answer when the conversation is longer than the model's context."""

# Machine-readable codes or types that say the same: OpenAI's code, llama-server's error type.
_CONTEXT_LENGTH_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
# 500: Ollama and some llama-server versions report an overlong prompt as an internal error.
_CONTEXT_LENGTH_STATUSES = frozenset({400, 413, 422, 500})


@dataclass(frozen=True)
class Endpoint:
    """Who failed, in the words an error message needs."""

    model_name: str
    model_id: str
    base_url: str
    profile: ProviderProfile
    max_retries: int
    api_key_from: str
    """Where the key came from, e.g. `the DEEPSEEK_API_KEY environment variable`."""


def error_text(body: object) -> str:
    """The human part of an error body, whatever shape the server gave it."""
    found: Any = body
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            found = inner.get("message") or inner
        elif isinstance(inner, str) and inner:
            found = inner
        else:
            found = body.get("message") or body.get("detail") or body
    if not isinstance(found, str):
        found = json.dumps(found, ensure_ascii=False, default=str)
    text = " ".join(str(found).split())
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def says_tools_not_supported(text: str) -> bool:
    return any(pattern.search(text) for pattern in TOOLS_NOT_SUPPORTED_PHRASES)


def says_context_too_long(body: object) -> bool:
    """Whether an error body says the request did not fit the model's context, in any provider's words."""
    inner = body.get("error") if isinstance(body, dict) else None
    for source in (inner, body):
        if isinstance(source, dict) and any(
            str(source.get(key)) in _CONTEXT_LENGTH_CODES for key in ("code", "type")
        ):
            return True
    text = error_text(body)
    return any(pattern.search(text) for pattern in CONTEXT_LENGTH_PHRASES)


def error_code(body: object) -> str | None:
    """The provider's machine-readable code (`rate_limit_exceeded`), else its error type, if any."""
    inner = body.get("error") if isinstance(body, dict) else None
    for source in (inner, body):
        if isinstance(source, dict):
            for key in ("code", "type"):
                if isinstance(value := source.get(key), str | int) and str(value):
                    return str(value)
    return None


def status_error(
    endpoint: Endpoint,
    status: int,
    body: object,
    *,
    sent_tools: bool,
    headers: Mapping[str, str] | None = None,
) -> ModelError:
    """The error for an HTTP error status, after the SDK's own retries; it keeps status, code, headers
    and body, and says what `kind` of failure it is, so a caller (the server) can answer in kind."""
    shape: dict[str, Any] = {"status": status, "body": body, "code": error_code(body), "headers": headers}
    name, base_url, model_id = endpoint.model_name, endpoint.base_url, endpoint.model_id
    text = error_text(body)
    said = f"(HTTP {status}: {text})"
    retries = _after_retries(endpoint)
    if sent_tools and status in _TOOLS_REJECTED_STATUSES and says_tools_not_supported(text):
        return ToolsNotSupportedError(
            f"{name}: {base_url} does not accept tools for model {model_id!r} {said}. "
            'Use tool_mode "prompt" for this model; with tool_mode "auto" toolbridge switches to it '
            "by itself and remembers that.",
            model=name,
            kind="tools_not_supported",
            **shape,
        )
    if status in _CONTEXT_LENGTH_STATUSES and says_context_too_long(body):
        return ModelError(
            f"{name}: the conversation is too long for model {model_id!r} at {base_url} {said}. "
            "Shorten the conversation or its tool results, ask for fewer max_tokens, or use a model "
            "with a larger context.",
            model=name,
            kind="context_length_exceeded",
            **shape,
        )
    if status == 401:
        message = (
            f"{name}: the API key was rejected by {base_url} {said}. "
            f"Check {endpoint.api_key_from}, and that the key belongs to this provider."
        )
    elif status == 403:
        message = (
            f"{name}: access denied by {base_url} {said}. "
            f"Check that the API key may use model {model_id!r} ({endpoint.api_key_from})."
        )
    elif status == 404:
        message = (
            f"{name}: {base_url} has no model {model_id!r}, or no API at that address {said}. "
            f"Check the model id{_model_list_hint(endpoint)}, and that base_url is the API's root "
            "(it often ends in /v1)."
        )
    elif status == 429:
        # ModelError reads Retry-After (seconds or milliseconds) one way for everyone.
        wait = ModelError("", model=name, headers=headers).retry_after
        advice = f"Wait {wait:g} s, as it asks," if wait is not None else "Wait"
        message = (
            f"{name}: rate limited or out of quota at {base_url} {said}{retries}. "
            f"{advice} and try again, or check your plan's quota and billing."
        )
    elif status in (400, 413, 422):
        message = (
            f"{name}: {base_url} rejected the request {said}. Check the model's settings "
            f"(temperature, max_tokens) and that model {model_id!r} supports this kind of request."
        )
    elif status >= 500:
        message = (
            f"{name}: the server at {base_url} failed {said}{retries}. "
            "Try again later; if it keeps failing, check the server's status or logs."
        )
    else:
        message = f"{name}: unexpected answer from {base_url} {said}."
    return ModelError(message, model=name, **shape)  # its kind follows from the status


def connection_error(endpoint: Endpoint, cause: BaseException | None, *, timed_out: bool) -> ModelError:
    name, base_url = endpoint.model_name, endpoint.base_url
    retries = _after_retries(endpoint)
    if timed_out:
        message = (
            f"{name}: {base_url} did not answer in time{retries}. "
            "Check that the server is up and not overloaded, or raise the model's timeout."
        )
    else:
        reason = _root_cause(cause)
        hint = f" If not, {endpoint.profile.start_hint}." if endpoint.profile.start_hint else ""
        message = (
            f"{name}: cannot connect to {base_url}{f' ({reason})' if reason else ''}{retries}. "
            f"Is the server at base_url running, and is base_url right?{hint}"
        )
    return ModelError(message, model=name, kind="timeout" if timed_out else "unreachable")


def stream_error(endpoint: Endpoint, body: object, *, status: int | None = None) -> ModelError:
    """An error the server sent inside a stream that had started well."""
    message = (
        f"{endpoint.model_name}: the reply from {endpoint.base_url} broke off with an error: "
        f"{error_text(body)}. Try again; if it repeats, check the server's status or logs."
    )
    kind: ModelErrorKind = "context_length_exceeded" if says_context_too_long(body) else "stream_error"
    return ModelError(
        message, model=endpoint.model_name, status=status, body=body, code=error_code(body), kind=kind
    )


def cut_off_error(endpoint: Endpoint, what: str) -> ModelError:
    """A reply that ended before it was complete, `what` saying how (the connection was lost, or the
    stream ended without its end marker): the server was reached and had begun to answer."""
    message = (
        f"{endpoint.model_name}: the reply from {endpoint.base_url} was cut off: {what}. Try again; if it "
        "repeats, check the server's logs (did it crash or restart?) and any proxy's timeouts between."
    )
    return ModelError(message, model=endpoint.model_name, kind="stream_error")


def _after_retries(endpoint: Endpoint) -> str:
    count = endpoint.max_retries
    return f", still after {count} {'retry' if count == 1 else 'retries'}" if count else ""


def _model_list_hint(endpoint: Endpoint) -> str:
    if endpoint.profile.name == "ollama":
        return " (`ollama list` shows them; `ollama pull <model>` fetches one)"
    return f" (GET {endpoint.base_url.rstrip('/')}/models lists them on most servers)"


def _root_cause(error: BaseException | None) -> str:
    # The SDKs say only "Connection error."; the socket error underneath says what happened.
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if error.__cause__ is None and error.__context__ is None:
            break
        error = error.__cause__ or error.__context__
    text = str(error).strip() if error is not None else ""
    return "" if text in ("", "Connection error.") else text
