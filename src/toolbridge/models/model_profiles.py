"""Model profiles: which tool-call dialect a model writes in text, and whether its chat template opens
the reasoning block in the prompt, looked up by the model's id.

Provider profiles (`provider_profiles.py`) describe the endpoint; these describe the weights behind it, so one
table serves Ollama, vLLM, llama.cpp and hosted APIs alike. The dialect is what the parser reads first
when markup leaks into the text in native mode, and what prompt mode asks the model to write: a model
calls best in the format it was trained on. Unknown models get Hermes, the most widely trained format.
A model's config entry overrides both (`"dialect": "glm"`, `"reasoning_open": true`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

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
_MISTRAL = ModelProfile("mistral")

MODEL_PROFILES: tuple[tuple[str, ModelProfile], ...] = (
    # Patterns match the model's own name, lower case: the last part of a path or repository id
    # (`Qwen/Qwen3-Coder-30B-A3B-Instruct` -> `qwen3-coder-30b-a3b-instruct`), with Ollama's tag kept
    # (`qwen3-coder:30b`). The first match wins, so specific patterns come before general ones.
    ("qwen3-coder*", _QWEN_XML),
    ("qwen3.5*", ModelProfile("qwen3_xml", reasoning_open=True)),
    ("qwen3.6*", ModelProfile("qwen3_xml", reasoning_open=True)),
    ("qwen3*thinking*", _THINKING_HERMES),
    ("qwq*", _THINKING_HERMES),
    ("qwen*", DEFAULT_PROFILE),
    ("hermes*", DEFAULT_PROFILE),
    ("glm-4.5*", _GLM),
    ("glm-4.6*", _GLM),
    ("glm-4.7*", ModelProfile("glm", reasoning_open=True)),
    ("glm-5*", ModelProfile("glm", reasoning_open=True)),
    ("gpt-oss*", ModelProfile("harmony")),
    ("deepseek-r1*", ModelProfile("deepseek", reasoning_open=True)),
    ("deepseek*", _DEEPSEEK),
    ("kimi-k2*", ModelProfile("kimi")),
    ("kimi-k3*", ModelProfile("kimi", reasoning_open=True)),
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


def model_profile(model_id: str) -> ModelProfile:
    """The profile of the model with this id; `DEFAULT_PROFILE` (Hermes) when none matches."""
    # `hf.co/unsloth/GLM-4.6-GGUF:Q4_K_M`, `accounts/fireworks/models/gpt-oss-120b`: the last part.
    key = model_id.strip().lower().rpartition("/")[2]
    for pattern, profile in MODEL_PROFILES:
        if fnmatchcase(key, pattern):
            return profile
    return DEFAULT_PROFILE
