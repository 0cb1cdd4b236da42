"""How the conformance table's rows are written: a row, a family's way of writing calls and reasoning, the
standard forms built from it, and each family's call writers (from the engines' tool parsers and the
models' chat templates; see conformance_table.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from family_checks import Case

FORMS = (
    "single",
    "parallel",
    "text-then-call",
    "call-then-text",
    "reasoning-then-call",
    "nested-unicode-escaped",
    "empty-arguments",
    "cut-off",
)


WEATHER = ("get_weather", {"city": "Paris"})
TIME = ("get_time", {"tz": "CET"})
NOW = ("now", {})
NESTED = (
    "write",
    {
        "path": "/tmp/é 日本.txt",
        "data": {"l": [1, 2.5, None, True], "s": 'say "hi" \\ back\nline </x>'},
        "note": "😀 ✓ ü",
    },
)
ToolCall = tuple[str, dict[str, Any]]
REASONING = "The user wants the weather in Paris, so I call get_weather."


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# hermes / Qwen3 / Qwen2.5 (vLLM `hermes_tool_parser`, the Qwen3 chat template): a JSON object between
# `<tool_call>\n` and `\n</tool_call>`, calls one per line; Qwen3 reasons in `<think>\n...\n</think>\n\n`.
def hermes_call(tool: ToolCall) -> str:
    return "<tool_call>\n" + to_json({"name": tool[0], "arguments": tool[1]}) + "\n</tool_call>"


# Qwen3-Coder, Qwen3.5 and later (vLLM `qwen3coder_tool_parser`, SGLang `qwen3_coder_detector`, the
# template): `<function=NAME>` with `<parameter=KEY>\nvalue\n</parameter>`, non-strings as JSON.
def qwen_xml_call(tool: ToolCall) -> str:
    parameters = "".join(
        f"<parameter={key}>\n{value if isinstance(value, str) else to_json(value)}\n</parameter>\n"
        for key, value in tool[1].items()
    )
    return f"<tool_call>\n<function={tool[0]}>\n{parameters}</function>\n</tool_call>"


# GLM-4.5/4.6 (vLLM `glm4_moe_tool_parser`, the template): the name, then `<arg_key>`/`<arg_value>`
# pairs, a newline after each; GLM-4.7 and 5 write no newlines and their prompt opens `<think>`.
def glm_call(tool: ToolCall, newlines: bool = True) -> str:
    nl = "\n" if newlines else ""
    pairs = "".join(
        f"<arg_key>{key}</arg_key>{nl}<arg_value>{value if isinstance(value, str) else to_json(value)}"
        f"</arg_value>{nl}"
        for key, value in tool[1].items()
    )
    return f"<tool_call>{tool[0]}{nl}{pairs}</tool_call>"


# DeepSeek (vLLM `deepseekv3`/`deepseekv31`/`deepseekv32` tool parsers, SGLang's detectors, the
# templates and V3.2/V4 encoding scripts).
DS_BEGIN, DS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL, DS_CALL_END, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
DS_EOS = "<｜end▁of▁sentence｜>"


def ds_block(calls: Sequence[str]) -> str:
    return DS_BEGIN + "".join(calls) + DS_END


def ds_v3_call(tool: ToolCall) -> str:
    return f"{DS_CALL}function{DS_SEP}{tool[0]}\n```json\n{to_json(tool[1])}\n```{DS_CALL_END}"


def ds_v31_call(tool: ToolCall) -> str:
    return f"{DS_CALL}{tool[0]}{DS_SEP}{to_json(tool[1])}{DS_CALL_END}"


def dsml_call(tool: ToolCall) -> str:
    parameters = "".join(
        f'<｜DSML｜parameter name="{key}" string="{str(isinstance(value, str)).lower()}">'
        f"{value if isinstance(value, str) else to_json(value)}</｜DSML｜parameter>\n"
        for key, value in tool[1].items()
    )
    return f'<｜DSML｜invoke name="{tool[0]}">\n{parameters}</｜DSML｜invoke>\n'


def dsml_block(tag: str) -> Callable[[Sequence[str]], str]:
    return lambda calls: f"\n\n<｜DSML｜{tag}>\n" + "".join(calls) + f"</｜DSML｜{tag}>"


# Kimi K2 (vLLM `kimi_k2_tool_parser`, SGLang `kimik2_detector`, llama.cpp, the template): a section of
# calls, each `functions.NAME:IDX` then JSON arguments; K2-Thinking reasons in `<think>...</think>`.
def kimi_call(tool: ToolCall) -> str:
    """Index 0: `kimi_block` numbers the calls of its section."""
    return f"<|tool_call_begin|>functions.{tool[0]}:0<|tool_call_argument_begin|>{to_json(tool[1])}<|tool_call_end|>"


def kimi_block(calls: Sequence[str]) -> str:
    numbered = [
        call.replace(":0<|tool_call_argument_begin|>", f":{i}<|tool_call_argument_begin|>")
        for i, call in enumerate(calls)
    ]
    return "<|tool_calls_section_begin|>" + "".join(numbered) + "<|tool_calls_section_end|>"


# Kimi K3 (docs/dialects.md#kimi): `<|open|>`/`<|close|>` elements; the prompt opens the `think` channel.
def k3_call(tool: ToolCall) -> str:
    arguments = "".join(
        f'<|open|>argument key="{key}" type="{"string" if isinstance(value, str) else "object"}"<|sep|>'
        f"{value if isinstance(value, str) else to_json(value)}<|close|>argument<|sep|>\n"
        for key, value in tool[1].items()
    )
    return f'<|open|>call tool="{tool[0]}"<|sep|>\n{arguments}<|close|>call<|sep|>\n'


def k3_block(calls: Sequence[str]) -> str:
    return "<|open|>tools<|sep|>\n" + "".join(calls) + "<|close|>tools<|sep|>"


# gpt-oss harmony (vLLM `openai_tool_parser`, the harmony renderer): the prompt ends in `<|start|>assistant`,
# reasoning is the `analysis` channel, a call a `commentary` message to `functions.NAME`.
def harmony_call(tool: ToolCall) -> str:
    return (
        f"<|channel|>commentary to=functions.{tool[0]} <|constrain|>json<|message|>{to_json(tool[1])}<|call|>"
    )


def harmony_block(calls: Sequence[str]) -> str:
    return "<|start|>assistant".join(calls)


HARMONY_PREAMBLE = "<|channel|>commentary<|message|>Let me check.<|end|><|start|>assistant"
HARMONY_FINAL = "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"


# Llama 3.1-3.3 JSON (vLLM `llama_tool_parser`, llama.cpp): a bare JSON object with "parameters", or
# after `<|python_tag|>`; several calls separated by `; `.
def llama_json_call(tool: ToolCall) -> str:
    return to_json({"name": tool[0], "parameters": tool[1]})


# Llama 3.2 / Llama 4 pythonic (vLLM `pythonic` and `llama4_pythonic` parsers): `[f(a=1), g(b="x")]`,
# Llama 4 inside `<|python_start|>...<|python_end|>`.
def python_literal(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    return repr(value)


def pythonic_call(tool: ToolCall) -> str:
    return f"{tool[0]}(" + ", ".join(f"{key}={python_literal(value)}" for key, value in tool[1].items()) + ")"


def pythonic_block(calls: Sequence[str]) -> str:
    return "[" + ", ".join(calls) + "]"


# Mistral (vLLM `mistral_tool_parser`, mistral-common): before v11 `[TOOL_CALLS] [json list]`, from
# v11 `[TOOL_CALLS]NAME[ARGS]{json}` per call; Magistral reasons in `[THINK]...[/THINK]`.
def mistral_list(calls: Sequence[str]) -> str:
    return "[TOOL_CALLS] [" + ", ".join(calls) + "]"


# Gemma 4 (the template, llama.cpp, Ollama `gemma4` parser): `<|tool_call>call:NAME{key:value}<tool_call|>`,
# strings between `<|"|>`; reasoning in the `<|channel>thought` channel.
def gemma_value(value: Any) -> str:
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, dict):
        return "{" + ",".join(f"{key}:{gemma_value(v)}" for key, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gemma_value(v) for v in value) + "]"
    return to_json(value)


def qwen_xml_unwrapped(tool: ToolCall) -> str:
    """A Qwen3-Coder call without its `<tool_call>` wrapper (vLLM's and SGLang's qwen3-coder parsers
    accept a bare `<function=` for this)."""
    return qwen_xml_call(tool).removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")


WEATHER_JSON = to_json(WEATHER[1])


@dataclass(frozen=True)
class Row:
    family: str
    """The model family (and version, where the markup changed between versions)."""
    form: str
    model: str | None
    """A model name of the family, as toolbridge looks up its profile (`None`: no model writes it
    unasked; toolbridge's own prompt-mode format)."""
    dialect: str
    """The dialect toolbridge chooses for `model`."""
    case: Case
    """The output and what must be read in it; `case.reasoning_open` is the profile's reasoning hint."""
    pending: str | None = None
    """The issue item that makes this row pass; until then it is a strict xfail."""
    in_auto: bool = True
    """`auto` reads it: False for the bare `{` / `[` forms, which only their own dialect looks for."""
    schemas: Mapping[str, Mapping[str, Any]] | None = None
    """The tools' parameter schemas the parser is given, where the values' types depend on them."""
    profile_pending: str | None = None
    """The issue item that makes toolbridge pick `dialect` and the hint for `model`."""

    @property
    def id(self) -> str:
        return f"{self.family}:{self.form}"


@dataclass(frozen=True)
class Family:
    """How one family writes: a call, a block of calls, reasoning; from these the standard forms."""

    name: str
    model: str | None
    dialect: str
    call: Callable[[ToolCall], str]
    block: Callable[[Sequence[str]], str] = "".join
    think: Callable[[str], str] = lambda reasoning: f"<think>\n{reasoning}\n</think>\n\n"
    """Reasoning the model opens itself."""
    lead: str = ""
    """What starts every output when the prompt opens reasoning (the reasoning and its close)."""
    hint: bool = False
    in_auto: bool = True
    pending: Mapping[str, str] = field(default_factory=dict)
    """Form -> the issue item it waits for."""
    profile_pending: str | None = None


def standard_rows(family: Family, overrides: Mapping[str, Case] | None = None) -> list[Row]:
    call, block, lead = family.call, family.block, family.lead
    reasoning = REASONING if lead else ""
    case = {
        "single": Case("", lead + block([call(WEATHER)]), calls=[WEATHER], reasoning=reasoning),
        "parallel": Case(
            "", lead + block([call(WEATHER), call(TIME)]), calls=[WEATHER, TIME], reasoning=reasoning
        ),
        "text-then-call": Case(
            "",
            lead + "Let me check.\n\n" + block([call(WEATHER)]),
            "Let me check.",
            [WEATHER],
            reasoning=reasoning,
        ),
        "call-then-text": Case(
            "", lead + block([call(WEATHER)]) + "\n\nDone.", "Done.", [WEATHER], reasoning=reasoning
        ),
        "reasoning-then-call": Case(
            "",
            (lead or family.think(REASONING)) + "Checking.\n" + block([call(WEATHER)]),
            "Checking.",
            [WEATHER],
            reasoning=REASONING,
        ),
        "nested-unicode-escaped": Case("", lead + block([call(NESTED)]), calls=[NESTED], reasoning=reasoning),
        "empty-arguments": Case("", lead + block([call(NOW)]), calls=[NOW], reasoning=reasoning),
    }
    whole = lead + "Checking.\n" + block([call(WEATHER)])
    case["cut-off"] = Case(
        "", whole[: whole.rindex("Paris") + 3], "Checking.", errors=1, reasoning=reasoning, truncated=True
    )
    case.update(overrides or {})
    return [
        Row(
            family.name,
            form,
            family.model,
            family.dialect,
            replace(case[form], id=f"{family.name}:{form}", reasoning_open=family.hint),
            pending=family.pending.get(form),
            in_auto=family.in_auto,
            profile_pending=family.profile_pending,
        )
        for form in FORMS
    ]


def extra(family: Family, form: str, text: str, **expected: Any) -> Row:
    """A form only this family has."""
    keys = ("pending", "schemas", "profile_pending")
    options = {key: expected.pop(key) for key in keys if key in expected}
    hint = expected.pop("hint", family.hint)
    model = expected.pop("model", family.model)
    case = Case(f"{family.name}:{form}", text, reasoning_open=hint, **expected)
    options.setdefault("profile_pending", family.profile_pending)
    return Row(family.name, form, model, family.dialect, case, in_auto=family.in_auto, **options)
