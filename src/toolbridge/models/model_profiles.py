"""Model profiles: which tool-call dialect a model writes in text, and whether its chat template opens
the reasoning block in the prompt, looked up by the model's id.

Provider profiles (`provider_profiles.py`) describe the endpoint; these describe the weights behind it, so one
table serves Ollama, vLLM, llama.cpp and hosted APIs alike. The dialect is what the parser reads first
when markup leaks into the text in native mode, and what prompt mode asks the model to write: a model
calls best in the format it was trained on. Unknown models get Hermes, the most widely trained format.
A model's config entry overrides both (`"dialect": "glm"`, `"reasoning_open": true`).

New versions of a family appear monthly and keep its format, so a pattern may bound a version instead of
naming one: `qwen{>=3.5}*` matches `qwen3.5-35b`, `qwen3.7-flash` and `qwen4-8b`, not `qwen3-8b`. The
version is the run of digits and dots at that place, up to a character that is no letter or digit
(`qwen35b` is no version 35), compared number by number (3.10 is after 3.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

__all__ = ["DEFAULT_PROFILE", "MODEL_PROFILES", "ModelProfile", "model_profile"]


@dataclass(frozen=True)
class ModelProfile:
    dialect: str = "hermes"
    """The name of a `toolbridge.parsing` call format."""
    reasoning_open: bool = False
    """The generation prompt may end inside the reasoning block (`<think>\\n`, a channel header), so the
    model's text may start with reasoning and only the close marker appear. A hint: the parser holds
    the text back until the output shows it (a close marker, a call, the end of the output)."""


DEFAULT_PROFILE = ModelProfile()

_THINKING_HERMES = ModelProfile("hermes", reasoning_open=True)
_QWEN_XML = ModelProfile("qwen3_xml")
_GLM = ModelProfile("glm")
_DEEPSEEK = ModelProfile("deepseek")
_KIMI = ModelProfile("kimi")
_KIMI_THINKING = ModelProfile("kimi", reasoning_open=True)
_MISTRAL = ModelProfile("mistral")

MODEL_PROFILES: tuple[tuple[str, ModelProfile], ...] = (
    # Patterns match the model's own name, lower case: the last part of a path or repository id
    # (`Qwen/Qwen3-Coder-30B-A3B-Instruct` -> `qwen3-coder-30b-a3b-instruct`), with Ollama's tag kept
    # (`qwen3-coder:30b`). The first match wins, so specific patterns come before general ones.
    ("qwen3-coder*", _QWEN_XML),
    ("qwen{>=3.5}*", ModelProfile("qwen3_xml", reasoning_open=True)),
    ("qwen3*thinking*", _THINKING_HERMES),
    ("qwq*", _THINKING_HERMES),
    ("qwen*", DEFAULT_PROFILE),
    ("hermes*", DEFAULT_PROFILE),
    ("glm-4.5*", _GLM),
    ("glm-4.6*", _GLM),
    ("glm-{>=4.7}*", ModelProfile("glm", reasoning_open=True)),
    ("gpt-oss*", ModelProfile("harmony")),
    ("deepseek-r1*", ModelProfile("deepseek", reasoning_open=True)),
    # V3.1 and later end the prompt with `<think>` in thinking mode (V4 thinks by default) and with
    # `</think>` in chat mode: the hint holds the text back until the output shows which it was.
    ("deepseek-v{>=3.1}*", ModelProfile("deepseek", reasoning_open=True)),
    ("deepseek*", _DEEPSEEK),
    # K2-Thinking, K2.5 and later think by default (K2.5's prompt ends with `<think>`); K3 opens `think`.
    ("kimi-k2-thinking*", _KIMI_THINKING),
    ("kimi-k{>=2.5}*", _KIMI_THINKING),
    ("kimi*", _KIMI),
    ("llama-4*", ModelProfile("llama_pythonic")),
    ("llama4*", ModelProfile("llama_pythonic")),
    ("llama-3.2-1b*", ModelProfile("llama_pythonic")),
    ("llama-3.2-3b*", ModelProfile("llama_pythonic")),
    ("llama-3*", ModelProfile("llama3_json")),
    ("llama3*", ModelProfile("llama3_json")),
    ("meta-llama-3*", ModelProfile("llama3_json")),
    ("mistral*", _MISTRAL),
    ("mixtral*", _MISTRAL),
    ("magistral*", _MISTRAL),
    ("devstral*", _MISTRAL),
    ("ministral*", _MISTRAL),
    ("codestral*", _MISTRAL),
    ("gemma-4*", ModelProfile("gemma")),
    ("gemma4*", ModelProfile("gemma")),
)


_VERSION_P = re.compile(r"(?<=\d)p(?=\d)")
_VERSION_BOUND = re.compile(r"\{>=(\d+(?:\.\d+)*)\}")


@cache
def _compile(pattern: str) -> tuple[re.Pattern[str], tuple[int, ...] | None]:
    """A pattern's regex (`*` is any text, `?` one character), and the least version it allows."""
    bound = _VERSION_BOUND.search(pattern)
    parts = _VERSION_BOUND.split(pattern, maxsplit=1)

    def translate(part: str) -> str:
        return re.escape(part).replace(r"\*", ".*").replace(r"\?", ".")

    if bound is None:
        return re.compile(translate(pattern), re.DOTALL), None
    # The whole number and nothing glued to it: `qwen35b` is a size, not version 35.
    version = r"(\d+(?:\.\d+)*)(?![0-9a-z]|\.\d)"
    regex = translate(parts[0]) + version + translate(parts[2])
    return re.compile(regex, re.DOTALL), _version(bound.group(1))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(number) for number in text.split("."))


def _matches(key: str, pattern: str) -> bool:
    regex, least = _compile(pattern)
    match = regex.fullmatch(key)
    return match is not None and (least is None or _version(match.group(1)) >= least)


def model_profile(model_id: str) -> ModelProfile:
    """The profile of the model with this id; `DEFAULT_PROFILE` (Hermes) when none matches."""
    # `hf.co/unsloth/GLM-4.6-GGUF:Q4_K_M`, `accounts/fireworks/models/gpt-oss-120b`: the last part.
    key = model_id.strip().lower().rpartition("/")[2]
    key = _VERSION_P.sub(".", key)  # Fireworks writes `glm-4p7`, `kimi-k2p5` for 4.7 and 2.5
    for pattern, profile in MODEL_PROFILES:
        if _matches(key, pattern):
            return profile
    return DEFAULT_PROFILE
