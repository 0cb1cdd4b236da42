"""The parser conformance table: one row per (family, form), for every family toolbridge reads.

Each row is an output as the family's models write it (the markup from the engines' tool parsers and
reasoning parsers, vLLM `tool_parsers/`, SGLang `function_call/`, llama.cpp `common/chat*`, Ollama
`model/parsers`, and the models' chat templates and encoding scripts; our own cases, no imported corpus),
with what toolbridge must read in it, the model name toolbridge picks the dialect and the reasoning hint
by, and both. How a family writes its calls, and the standard forms built from that, are in
conformance_forms.py. `test_conformance.py` reads every row whole, one character at a time and in random
chunks, in the family's dialect and in `auto`.

The forms every family has: `single`, `parallel`, `text-then-call`, `call-then-text`,
`reasoning-then-call`, `nested-unicode-escaped`, `empty-arguments`, `cut-off`. A family adds the forms
only it has. A row toolbridge does not read right yet names the issue item that makes it pass
(`pending`); it runs as a strict xfail, so the row fails loudly once the item lands and its marker is due
for removal.
"""

from __future__ import annotations

from conformance_forms import (
    DS_CALL,
    DS_END,
    DS_EOS,
    HARMONY_FINAL,
    HARMONY_PREAMBLE,
    NOW,
    REASONING,
    TIME,
    WEATHER,
    WEATHER_JSON,
    Family,
    Row,
    ds_block,
    ds_v3_call,
    ds_v31_call,
    dsml_block,
    dsml_call,
    extra,
    gemma_value,
    glm_call,
    harmony_block,
    harmony_call,
    hermes_call,
    k3_block,
    k3_call,
    kimi_block,
    kimi_call,
    llama_json_call,
    mistral_list,
    pythonic_block,
    pythonic_call,
    qwen_xml_call,
    qwen_xml_unwrapped,
    standard_rows,
    to_json,
)
from family_checks import Case

HERMES = Family("qwen3-hermes", "qwen3-8b", "hermes", hermes_call, "\n".join)
QWEN3_THINKING = Family(
    "qwen3-thinking-2507",
    "qwen3-30b-a3b-thinking-2507",
    "hermes",
    hermes_call,
    "\n".join,
    lead=REASONING + "\n</think>\n\n",  # the template opens `<think>\n` in the prompt
    hint=True,
)


QWEN3_CODER = Family("qwen3-coder", "qwen3-coder-30b-a3b-instruct", "qwen3_xml", qwen_xml_call, "\n".join)
QWEN35 = Family(
    "qwen3.5",
    "qwen3.5-35b-a3b",
    "qwen3_xml",
    qwen_xml_call,
    "\n".join,
    lead=REASONING + "\n</think>\n\n",  # the template opens `<think>\n` when thinking
    hint=True,
)


GLM45 = Family("glm-4.5", "glm-4.5", "glm", glm_call, "\n".join)
GLM47 = Family(
    "glm-4.7",
    "glm-4.7",
    "glm",
    lambda tool: glm_call(tool, newlines=False),
    lead=REASONING + "</think>",
    hint=True,
)


DEEPSEEK_V3 = Family("deepseek-v3", "deepseek-v3-0324", "deepseek", ds_v3_call, ds_block)
DEEPSEEK_R1 = Family(
    "deepseek-r1",
    "deepseek-r1-0528",
    "deepseek",
    ds_v3_call,
    ds_block,
    lead=REASONING + "\n</think>\n\n",  # the template ends in `<｜Assistant｜><think>\n`
    hint=True,
)
# V3.1 and later: thinking mode is the prompt's `<｜Assistant｜><think>` (chat mode `</think>`), so the
# model writes the reasoning and its close only: the hint is True, and the output decides.
DEEPSEEK_V31 = Family(
    "deepseek-v3.1",
    "deepseek-v3.1",
    "deepseek",
    ds_v31_call,
    ds_block,
    think=lambda reasoning: reasoning + "</think>",
    hint=True,
)
DEEPSEEK_V32 = Family(
    "deepseek-v3.2",
    "deepseek-v3.2",
    "deepseek",
    dsml_call,
    dsml_block("function_calls"),
    think=lambda reasoning: reasoning + "</think>",
    hint=True,
)
DEEPSEEK_V4 = Family(
    "deepseek-v4",
    "deepseek-v4-flash",
    "deepseek",
    dsml_call,
    dsml_block("tool_calls"),
    think=lambda reasoning: reasoning + "</think>",
    hint=True,  # thinking mode's prompt ends in `<think>`; these rows are chat mode's answers
)


KIMI_K2 = Family("kimi-k2", "kimi-k2-instruct-0905", "kimi", kimi_call, kimi_block)
# K2.5 and K2.6: the prompt ends in `<|im_assistant|>assistant<|im_middle|><think>` (`<think></think>` with
# thinking off), so the output starts in reasoning and only `</think>` appears.
KIMI_K25 = Family(
    "kimi-k2.5",
    "kimi-k2.5",
    "kimi",
    kimi_call,
    kimi_block,
    lead=REASONING + "</think>",
    hint=True,
)


KIMI_K3 = Family(
    "kimi-k3", "kimi-k3", "kimi", k3_call, k3_block, lead=REASONING + "<|close|>think<|sep|>\n", hint=True
)


GPT_OSS = Family(
    "gpt-oss",
    "gpt-oss-20b",
    "harmony",
    harmony_call,
    harmony_block,
    think=lambda reasoning: f"<|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant",
)


LLAMA3_JSON = Family(
    "llama-3.1-json", "llama-3.1-8b-instruct", "llama3_json", llama_json_call, "; ".join, in_auto=False
)
LLAMA3_TAG = Family(
    "llama-3.1-python-tag",
    "llama-3.3-70b-instruct",
    "llama3_json",
    llama_json_call,
    lambda calls: "<|python_tag|>" + "; ".join(calls),
)


LLAMA32 = Family(
    "llama-3.2-pythonic",
    "llama-3.2-3b-instruct",
    "llama_pythonic",
    pythonic_call,
    pythonic_block,
    in_auto=False,
)
LLAMA4 = Family(
    "llama-4",
    "llama-4-scout-17b-16e-instruct",
    "llama_pythonic",
    pythonic_call,
    lambda calls: "<|python_start|>" + pythonic_block(calls) + "<|python_end|>",
)


MISTRAL_V3 = Family(
    "mistral-pre-v11",
    "mistral-7b-instruct-v0.3",
    "mistral",
    lambda tool: to_json({"name": tool[0], "arguments": tool[1]}),
    mistral_list,
    think=lambda reasoning: f"[THINK]{reasoning}[/THINK]",
)
MISTRAL_V11 = Family(
    "mistral-v11",
    "mistral-small-3.2-24b-instruct-2506",
    "mistral",
    lambda tool: f"[TOOL_CALLS]{tool[0]}[ARGS]{to_json(tool[1])}",
    think=lambda reasoning: f"[THINK]{reasoning}[/THINK]",
)


GEMMA4 = Family(
    "gemma-4",
    "gemma-4-26b-a4b-it",
    "gemma",
    lambda tool: f"<|tool_call>call:{tool[0]}{gemma_value(tool[1])}<tool_call|>",
    think=lambda reasoning: f"<|channel>thought\n{reasoning}<channel|>",
)

# fenced: toolbridge's own prompt-mode block, for models with no call format of their own.
FENCED = Family(
    "fenced",
    None,
    "fenced",
    lambda tool: f"```tool\nname: {tool[0]}\narguments: {to_json(tool[1])}\n```",
    "\n".join,
)

FAMILIES = (
    HERMES,
    QWEN3_THINKING,
    QWEN3_CODER,
    QWEN35,
    GLM45,
    GLM47,
    DEEPSEEK_V3,
    DEEPSEEK_R1,
    DEEPSEEK_V31,
    DEEPSEEK_V32,
    DEEPSEEK_V4,
    KIMI_K2,
    KIMI_K25,
    KIMI_K3,
    GPT_OSS,
    LLAMA3_JSON,
    LLAMA3_TAG,
    LLAMA32,
    LLAMA4,
    MISTRAL_V3,
    MISTRAL_V11,
    GEMMA4,
    FENCED,
)

OVERRIDES: dict[str, dict[str, Case]] = {
    # a call ends the turn (`<|call|>`): text comes before it, in a commentary preamble, or after the result
    GPT_OSS.name: {
        "text-then-call": Case("", HARMONY_PREAMBLE + harmony_call(WEATHER), "Let me check.", [WEATHER]),
        "call-then-text": Case("", harmony_call(WEATHER) + HARMONY_FINAL, "Done.", [WEATHER]),
        "reasoning-then-call": Case(
            "",
            GPT_OSS.think(REASONING)
            + HARMONY_PREAMBLE.replace("Let me check.", "Checking.")
            + harmony_call(WEATHER),
            "Checking.",
            [WEATHER],
            reasoning=REASONING,
        ),
    },
}
STRING_OR_NULL = {"note": {"type": ["string", "null"]}}
EXTRA_ROWS = [
    # item A: the output decides the reasoning state.
    extra(
        QWEN35,
        "thinking-off",  # the template wrote `<think>\n\n</think>\n\n` in the prompt: no close in the output
        "Let me check.\n" + qwen_xml_call(WEATHER),
        content="Let me check.",
        calls=[WEATHER],
    ),
    extra(
        GLM47,
        "thinking-off",
        "Checking." + GLM47.call(WEATHER),
        content="Checking.",
        calls=[WEATHER],
    ),
    extra(
        KIMI_K3,
        "thinking-off",
        "<|open|>response<|sep|>Checking.<|close|>response<|sep|>\n" + k3_block([k3_call(WEATHER)]),
        content="Checking.",
        calls=[WEATHER],
    ),
    extra(
        QWEN3_THINKING,
        "call-in-presumed-open-reasoning",  # no `</think>`: the call opening marker decides
        "I should check the weather.\n" + hermes_call(WEATHER),
        content="I should check the weather.",
        calls=[WEATHER],
    ),
    extra(
        DEEPSEEK_R1,
        "call-in-presumed-open-reasoning",
        "I should check the weather.\n" + ds_block([ds_v3_call(WEATHER)]),
        content="I should check the weather.",
        calls=[WEATHER],
    ),
    extra(
        HERMES,
        "call-in-explicit-reasoning",  # a call inside `<think>` ends it and is read (as Ollama's Qwen3 parser)
        "<think>\nI will call it.\n" + hermes_call(WEATHER),
        reasoning="I will call it.",
        calls=[WEATHER],
    ),
    extra(
        KIMI_K2,
        "k2-thinking-call-in-reasoning",  # vLLM's kimi_k2 reasoning parser ends the reasoning at the section
        "<think>" + REASONING + kimi_block([kimi_call(WEATHER)]),
        model="kimi-k2-thinking",
        hint=True,
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    # item B: DeepSeek V4 DSML, Kimi K2.x, newer versions of known families.
    extra(
        DEEPSEEK_V4,
        "self-closing-invoke",  # SGLang's V4 detector: `<｜DSML｜invoke name="x"/>` for a tool without arguments
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="now"/>\n</｜DSML｜tool_calls>',
        calls=[NOW],
    ),
    extra(
        DEEPSEEK_V4,
        "self-closing-after-long-form",
        "<｜DSML｜tool_calls>\n" + dsml_call(WEATHER) + '<｜DSML｜invoke name="now"/>\n</｜DSML｜tool_calls>',
        calls=[WEATHER, NOW],
    ),
    extra(
        KIMI_K25,
        "newer-version",
        KIMI_K25.lead + kimi_block([kimi_call(WEATHER)]),
        model="kimi-k2.6",
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        QWEN35,
        "newer-version",
        QWEN35.lead + qwen_xml_call(WEATHER),
        model="qwen3.7-35b-a3b",
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        GLM47,
        "newer-version",
        GLM47.lead + GLM47.call(WEATHER),
        model="glm-5.1",
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        KIMI_K2,
        "call-ids",
        kimi_block([kimi_call(WEATHER), kimi_call(TIME)]),
        calls=[WEATHER, TIME],
        ids=["functions.get_weather:0", "functions.get_time:1"],
    ),
    # item C: Qwen3-Coder without the opener, gpt-oss starting in a header, GLM escaped JSON.
    extra(
        QWEN3_CODER,
        "no-opener",
        qwen_xml_unwrapped(WEATHER) + "\n</tool_call>",
        calls=[WEATHER],
    ),
    extra(
        QWEN3_CODER,
        "no-opener-no-closer",
        "Let me check.\n" + qwen_xml_unwrapped(WEATHER),
        content="Let me check.",
        calls=[WEATHER],
    ),
    extra(
        QWEN35,
        "no-opener",
        QWEN35.lead + qwen_xml_unwrapped(WEATHER),
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        GPT_OSS,
        "starts-in-the-role-header",  # the prompt ended in `<|start|>assistant`
        f" to=functions.get_weather<|channel|>commentary json<|message|>{WEATHER_JSON}<|call|>",
        calls=[WEATHER],
    ),
    extra(
        GPT_OSS,
        "starts-in-the-channel-header",  # the prompt ended in `<|channel|>`
        f"commentary to=functions.get_weather <|constrain|>json<|message|>{WEATHER_JSON}<|call|>",
        calls=[WEATHER],
    ),
    extra(
        GPT_OSS,
        "recipient-in-the-role-header",
        f"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{WEATHER_JSON}<|call|>",
        calls=[WEATHER],
    ),
    extra(
        GLM45,
        "escaped-json-string",
        '<tool_call>write\n<arg_key>note</arg_key>\n<arg_value>"a \\"quoted\\" text"</arg_value>\n</tool_call>',
        calls=[("write", {"note": 'a "quoted" text'})],
        schemas={"write": {"type": "object", "properties": {"note": {"type": "string"}}}},
    ),
    extra(
        GLM47,
        "escaped-json-object",
        GLM47.lead
        + '<tool_call>write<arg_key>data</arg_key><arg_value>{\\"a\\": [1, \\"x\\"]}</arg_value></tool_call>',
        reasoning=REASONING,
        calls=[("write", {"data": {"a": [1, "x"]}})],
        schemas={"write": {"type": "object", "properties": {"data": {"type": "object"}}}},
    ),
    # item D: typed values, and never running a damaged call.
    extra(
        QWEN3_CODER,
        "string-or-null-is-null",
        "<tool_call>\n<function=write>\n<parameter=note>\nnull\n</parameter>\n</function>\n</tool_call>",
        calls=[("write", {"note": None})],
        schemas={"write": {"type": "object", "properties": STRING_OR_NULL}},
    ),
    extra(
        GLM45,
        "any-of-string-null-is-null",
        "<tool_call>write\n<arg_key>note</arg_key>\n<arg_value>null</arg_value>\n</tool_call>",
        calls=[("write", {"note": None})],
        schemas={
            "write": {
                "type": "object",
                "properties": {"note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            }
        },
    ),
    extra(
        HERMES,
        "brace-missing-before-the-close",  # only the call object's own: the arguments are whole
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call>',
        calls=[WEATHER],
    ),
    extra(
        HERMES,
        "json-cut-by-a-closing-marker",
        '<tool_call>\n{"name": "run", "arguments": {"code": "print(1)\n</tool_call>\nDone.',
        content="Done.",
        errors=1,
    ),
    extra(
        HERMES,
        "ends-inside-the-json",  # the output stopped (not at the length limit) with braces to invent
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"',
        errors=1,
    ),
    extra(
        HERMES,
        "markers-inside-a-json-string",
        hermes_call(("run", {"code": "print('<tool_call>', '</tool_call>')"})),
        calls=[("run", {"code": "print('<tool_call>', '</tool_call>')"})],
    ),
    extra(LLAMA32, "ends-inside-the-list", "[get_weather(city='Par", errors=1),
    extra(LLAMA4, "ends-inside-the-call", "<|python_start|>[get_weather(city='Paris'", errors=1),
    # the families' other forms
    extra(
        MISTRAL_V11,
        "call-id",
        f"[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{WEATHER_JSON}",
        calls=[WEATHER],
        ids=["a1B2c3D4e"],
    ),
    extra(
        MISTRAL_V11,
        "magistral-reasoning",
        f"[THINK]{REASONING}[/THINK]Checking.[TOOL_CALLS]get_weather[ARGS]{WEATHER_JSON}",
        model="magistral-small-2509",
        content="Checking.",
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    # llama.cpp's DeepSeek R1 parser: the section opener some checkpoints spell differently, and the
    # `<｜tool▁call▁begin｜>` left out (its own tests feed `<｜tool▁calls｜>function<｜tool▁sep｜>...`).
    extra(
        DEEPSEEK_R1,
        "short-section-opener",
        DEEPSEEK_R1.lead + "<｜tool▁calls｜>" + ds_v3_call(WEATHER).removeprefix(DS_CALL) + DS_END,
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        DEEPSEEK_R1,
        "underscore-section-opener",
        DEEPSEEK_R1.lead + "<｜tool_calls_begin｜>" + ds_v3_call(WEATHER) + DS_END,
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        LLAMA3_JSON,
        "list-of-calls",  # small Llama 3.2 write the calls as one JSON list
        "[" + ", ".join(llama_json_call(tool) for tool in (WEATHER, TIME)) + "]",
        calls=[WEATHER, TIME],
    ),
    extra(
        GPT_OSS,
        "call-in-the-analysis-channel",  # vLLM's harmony parser reads a recipient in `analysis` too
        f"<|channel|>analysis<|message|>{REASONING}<|end|><|start|>assistant<|channel|>analysis"
        f" to=functions.get_weather <|constrain|>json<|message|>{WEATHER_JSON}<|call|>",
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        GPT_OSS,
        "json-without-constrain",
        f"<|channel|>commentary to=functions.get_weather json<|message|>{WEATHER_JSON}<|call|>",
        calls=[WEATHER],
    ),
    extra(
        KIMI_K2,
        "newlines-between-markers",  # the layout ik_llama.cpp documents for K2
        "<|tool_calls_section_begin|>\n<|tool_call_begin|>\nfunctions.get_weather:0<|tool_call_argument_begin|>\n"
        f"{WEATHER_JSON}\n<|tool_call_end|>\n<|tool_calls_section_end|>",
        calls=[WEATHER],
        ids=["functions.get_weather:0"],
    ),
    extra(DEEPSEEK_V3, "end-of-sentence", ds_block([ds_v3_call(WEATHER)]) + DS_EOS, calls=[WEATHER]),
    extra(
        DEEPSEEK_V31,
        "thinking-mode",  # the prompt opened `<think>`, chat-mode hint: the close marker decides
        REASONING + "</think>" + ds_block([ds_v31_call(WEATHER)]),
        reasoning=REASONING,
        calls=[WEATHER],
    ),
    extra(
        QWEN3_CODER,
        "parameter-value-with-markup",
        qwen_xml_call(("write", {"note": "a </parameter> b <function=x> c"})),
        calls=[("write", {"note": "a </parameter> b <function=x> c"})],
    ),
    extra(
        GEMMA4,
        "string-with-quotes-and-braces",
        '<|tool_call>call:write{note:<|"|>say "hi" {x}, [y]<|"|>}<tool_call|>',
        calls=[("write", {"note": 'say "hi" {x}, [y]'})],
    ),
]

ROWS: list[Row] = [
    *(row for family in FAMILIES for row in standard_rows(family, OVERRIDES.get(family.name))),
    *EXTRA_ROWS,
]
