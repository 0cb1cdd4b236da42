"""Model providers behind one interface: `Model.stream(ModelRequest)` yields `ModelEvent`s.

- `OpenAIChatModel`: any OpenAI-compatible chat-completions endpoint (OpenAI, DeepSeek, Qwen, Moonshot,
  Ollama, vLLM, LM Studio, llama.cpp), with each family's quirks in its `ProviderProfile`.
- `AnthropicModel`: Claude through Anthropic's Messages API.
- `DemoModel`: the built-in rule-based stand-in (`demo`), labelled as such in every answer.
- `Provider`: where a model lives (base URL, key, headers, retries) and, optionally, the user's own
  `httpx2.AsyncClient` to reach it through.
- `resolve_model(name, config)`: a name from the config's `models` section, `provider:model`, `demo`,
  or the defaults (`$OPENAI_API_KEY`, a local Ollama); `resolve_model_async` from async code.
- `NativeToolsModel`, `PromptToolsModel(inner, dialect=...)`, `AutoToolsModel` and
  `tool_calling_model(model, mode)`: how tools reach a model (natively, in the prompt, or native until
  refused); each yields the same native-style events. `ToolCallCollector` turns a reply's
  `ToolCallDelta`s into `ToolCall`s.
- `model_profile(model_id)`: the tool-call dialect a model writes and whether its prompt opens reasoning
  (`ModelProfile`); a model's own `dialect` / `reasoning_open` (from its config) come first.
- `remember_prompt_mode` / `remembered_tool_mode`: the memory of endpoints that reject native tools.
"""

from typing import TYPE_CHECKING, Any

from toolbridge._extras import require
from toolbridge.models._calls import CollectedCall, ToolCallCollector
from toolbridge.models.base import (
    Finish,
    InvalidToolCall,
    Model,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    NamedTool,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolModeChanged,
    UsageReport,
)
from toolbridge.models.demo import DemoModel
from toolbridge.models.model_profiles import ModelProfile, model_profile
from toolbridge.models.provider import Provider
from toolbridge.models.provider_profiles import PROFILES, ProviderProfile, find_profile
from toolbridge.models.resolve import (
    ModelConfig,
    build_model,
    model_configs,
    model_name_problem,
    resolve_model,
    resolve_model_async,
)
from toolbridge.models.tool_calling import (
    AutoToolsModel,
    NativeToolsModel,
    PromptToolsModel,
    ToolCallingModel,
    tool_calling_model,
)
from toolbridge.models.tool_modes import forget_tool_mode, remember_prompt_mode, remembered_tool_mode
from toolbridge.types import ToolMode, ToolModeSetting

if TYPE_CHECKING:
    from toolbridge.models.anthropic import AnthropicModel
    from toolbridge.models.openai import OpenAIChatModel

__all__ = [
    "PROFILES",
    "AnthropicModel",
    "AutoToolsModel",
    "CollectedCall",
    "DemoModel",
    "Finish",
    "InvalidToolCall",
    "Model",
    "ModelConfig",
    "ModelEvent",
    "ModelProfile",
    "ModelRequest",
    "ModelSettings",
    "NamedTool",
    "NativeToolsModel",
    "OpenAIChatModel",
    "PromptToolsModel",
    "Provider",
    "ProviderProfile",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallCollector",
    "ToolCallDelta",
    "ToolCallingModel",
    "ToolMode",
    "ToolModeChanged",
    "ToolModeSetting",
    "UsageReport",
    "build_model",
    "find_profile",
    "forget_tool_mode",
    "model_configs",
    "model_name_problem",
    "model_profile",
    "remember_prompt_mode",
    "remembered_tool_mode",
    "resolve_model",
    "resolve_model_async",
    "tool_calling_model",
]


def __getattr__(name: str) -> Any:
    # The adapters import their SDKs, which take seconds to import: only when asked for.
    if name == "OpenAIChatModel":
        require("openai", "openai", "OpenAIChatModel")
        from toolbridge.models.openai import OpenAIChatModel

        return OpenAIChatModel
    if name == "AnthropicModel":
        require("anthropic", "anthropic", "AnthropicModel")
        from toolbridge.models.anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module 'toolbridge.models' has no attribute {name!r}")
