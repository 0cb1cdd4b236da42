"""The corpus of model outputs the parser tests share: each with what toolbridge must see in it."""

from __future__ import annotations

from family_checks import Case

SEED_000_CALL = """<tool_call>
{
  "id": "call_001",
  "tool_name": "read_data_from_excel",
  "arguments": {
    "filepath": "test.xlsx",
    "sheet_name": "Sheet1"
  }
}
</tool_call>"""

SEED_002_OUTPUT = """现在需要查看myfile.xlsx文件内容。让我使用Excel工具来读取文件数据：

<tool_call>
{
  "id": "call_001",
  "tool_name": "read_data_from_excel",
  "arguments": {"filepath": "myfile.xlsx", "sheet_name": "Sheet1", "start_cell": "A1", "end_cell": "Z100"}
}
</tool_call>

读取Excel文件第一个工作表的A1到Z100范围数据。

(等待工具返回结果...)"""

SEED_001_TIME = """```tool
工具名称: get_current_time
参数: {}
```"""

SEED_001_CALCULATE = """```tool
工具名称: calculate
参数: {"expression": "15 + 27"}
```"""

TRICKY_STRING = r"a } { ] [ </tool_call> ``` \"quoted\" back\\slash 😀 中文 \u00e9" + "\\n"
TRICKY_VALUE = 'a } { ] [ </tool_call> ``` "quoted" back\\slash 😀 中文 é\n'

CASES: list[Case] = [
    # hermes
    Case(
        "hermes-basic",
        'Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        content="Let me check.",
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "seed-000-expected-call",
        SEED_000_CALL,
        calls=[("read_data_from_excel", {"filepath": "test.xlsx", "sheet_name": "Sheet1"})],
        ids=["call_001"],
    ),
    Case(
        "seed-002-text-around",
        SEED_002_OUTPUT,
        content="现在需要查看myfile.xlsx文件内容。让我使用Excel工具来读取文件数据：\n\n\n\n读取Excel文件第一个工作表的A1到Z100范围数据。\n\n(等待工具返回结果...)",
        calls=[
            (
                "read_data_from_excel",
                {"filepath": "myfile.xlsx", "sheet_name": "Sheet1", "start_cell": "A1", "end_cell": "Z100"},
            )
        ],
        ids=["call_001"],
    ),
    Case(
        "hermes-aliases-and-source",
        '<tool_call>{"tool_name": "read", "parameters": {"path": "a"}, "source": "excel-mcp", "id": 7}'
        "</tool_call>",
        calls=[("read", {"path": "a"})],
        ids=["7"],
        sources=["excel-mcp"],
    ),
    Case(
        "hermes-arguments-as-json-string",
        '<tool_call>{"name": "add", "arguments": "{\\"a\\": 1, \\"b\\": [2]}"}</tool_call>',
        calls=[("add", {"a": 1, "b": [2]})],
    ),
    Case(
        "hermes-nested",
        '<tool_call>{"name": "write", "arguments": {"data": [[1, 2], [3, {"a": []}]], '
        '"opts": {"deep": {"x": null, "y": true}}}}</tool_call>',
        calls=[("write", {"data": [[1, 2], [3, {"a": []}]], "opts": {"deep": {"x": None, "y": True}}})],
    ),
    Case(
        "hermes-tricky-strings",
        '<tool_call>{"name": "echo", "arguments": {"text": "' + TRICKY_STRING + '"}}</tool_call>done',
        content="done",
        calls=[("echo", {"text": TRICKY_VALUE})],
    ),
    Case(
        "hermes-raw-newline-in-string",
        '<tool_call>{"name": "note", "arguments": {"text": "line 1\nline 2"}}</tool_call>',
        calls=[("note", {"text": "line 1\nline 2"})],
    ),
    Case(
        "hermes-several-calls",
        'A <tool_call>{"name": "f", "arguments": {"n": 1}}</tool_call> B '
        '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>\nC',
        content="A  B \nC",
        calls=[("f", {"n": 1}), ("g", {})],
    ),
    Case(
        "hermes-name-after-arguments",
        '<tool_call>{"arguments": {"a": 1}, "name": "late"}</tool_call>',
        calls=[("late", {"a": 1})],
    ),
    Case(
        "hermes-openai-function-shape",
        '<tool_call>{"type": "function", "function": {"name": "f", "arguments": "{\\"x\\": 2}"}}</tool_call>',
        calls=[("f", {"x": 2})],
    ),
    Case(
        "hermes-no-closing-tag",
        '<tool_call>{"name": "f", "arguments": {}}\nDone.',
        content="Done.",
        calls=[("f", {})],
    ),
    # Arguments cut short are an error, never completed into a call that runs (issue 24).
    Case(
        "hermes-arguments-cut-at-end-of-output",
        '<tool_call>{"name": "f", "arguments": {"a": [1, 2',
        errors=1,
    ),
    Case(
        "hermes-arguments-cut-by-the-closing-tag",
        'A <tool_call>{"name": "f", "arguments": {"a": 1, "b": [2</tool_call> B',
        content="A  B",
        errors=1,
    ),
    Case(
        "hermes-brackets-that-do-not-match",
        '<tool_call>{"name": "f", "arguments": {"a": [1, 2}}</tool_call>',
        errors=1,
    ),
    Case(
        "hermes-only-the-last-brace-missing-after-whole-arguments",
        '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>after',
        content="after",
        calls=[("f", {"a": 1})],
    ),
    Case(
        "hermes-markers-inside-strings",
        '<tool_call>{"name": "run", "arguments": {"code": "print(\'<tool_call>\', \'</tool_call>\')"}}'
        "</tool_call>",
        calls=[("run", {"code": "print('<tool_call>', '</tool_call>')"})],
    ),
    Case(
        "hermes-repaired-json",
        "<tool_call>{'name': 'f', arguments: {'a': 1, 'b': [1, 2,],},}</tool_call>",
        calls=[("f", {"a": 1, "b": [1, 2]})],
    ),
    Case(
        "hermes-unterminated-string-swallows-close",
        '<tool_call>{"name": "f", "arguments": {"a": "oops}}</tool_call> tail',
        content=" tail",
        errors=1,
    ),
    Case(
        "hermes-json-wrapped-in-a-fence",
        '<tool_call>\n```json\n{"name": "f", "arguments": {"a": 1}}\n```\n</tool_call>ok',
        content="ok",
        calls=[("f", {"a": 1})],
    ),
    Case("hermes-no-name", '<tool_call>{"arguments": {"a": 1}}</tool_call>x', content="x", errors=1),
    Case("hermes-not-json", "<tool_call>get_weather(city=Paris)</tool_call>", errors=1),
    Case("hermes-array-body", "<tool_call>[1, 2]</tool_call>", errors=1),
    Case(
        "tool-call-body-decides-the-dialect",
        "A <tool_call>\n<function=get>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
        ' B <tool_call>{"name": "f", "arguments": {"a": "<b>"}}</tool_call> C'
        " <tool_call>g\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>",
        content="A  B  C ",
        calls=[("get", {"city": "Paris"}), ("f", {"a": "<b>"}), ("g", {"k": "v"})],
    ),
    Case(
        "hermes-tags-in-a-body-that-is-not-json",
        "A <tool_call>\n<fn=get>\n<parameter=city>\nParis\n</parameter>\n</fn>\n</tool_call>"
        ' B <tool_call>{"name": "f", "arguments": {"a": "<b>"}}</tool_call> C',
        content="A  B  C",
        calls=[("f", {"a": "<b>"})],
        errors=1,
    ),
    Case(
        "hermes-not-json-with-a-lone-angle-bracket",
        "<tool_call>x < y <</tool_call>after <",
        content="after <",
        errors=1,
    ),
    Case("hermes-empty-at-end", "text <tool_call>", content="text ", errors=1),
    Case("hermes-arguments-not-object", '<tool_call>{"name": "f", "arguments": [1]}</tool_call>', errors=1),
    Case(
        "stray-closing-tag-dropped",
        "ok </tool_call> fine",
        content="ok  fine",
    ),
    Case(
        "angle-brackets-and-near-markers",
        "a < b, <b>bold</b>, <tool>, <tool_cal, <think, `code` and ``x`` <too",
        content="a < b, <b>bold</b>, <tool>, <tool_cal, <think, `code` and ``x`` <too",
    ),
    # fenced
    Case(
        "seed-001-get-current-time",
        "好的，我查一下。\n" + SEED_001_TIME + "\n",
        content="好的，我查一下。\n\n",
        calls=[("get_current_time", {})],
    ),
    Case("seed-001-calculate", SEED_001_CALCULATE, calls=[("calculate", {"expression": "15 + 27"})]),
    Case(
        "fenced-english-labels",
        'Sure.\n```tool\nname: search\narguments: {"q": "mcp", "limit": 3}\n```\nDone.',
        content="Sure.\n\nDone.",
        calls=[("search", {"q": "mcp", "limit": 3})],
    ),
    Case(
        "fenced-fullwidth-colon-id-source",
        '```tool\n工具名称：calculate\nid: c1\nsource: math\n参数：{"expression": "1+1"}\n```',
        calls=[("calculate", {"expression": "1+1"})],
        ids=["c1"],
        sources=["math"],
    ),
    Case(
        "fenced-multiline-json-with-fences-in-strings",
        '```tool\n工具名称: run\n参数: {\n  "code": "print(\'```\')",\n  "x": {"y": [1, "}"]}\n}\n```',
        calls=[("run", {"code": "print('```')", "x": {"y": [1, "}"]}})],
    ),
    Case("fenced-empty-arguments", "```tool\nname: ping\narguments:\n```", calls=[("ping", {})]),
    Case("fenced-no-arguments-line", "```tool\nname: ping\n```", calls=[("ping", {})]),
    Case(
        "fenced-repaired-arguments",
        "```tool\n工具名称: calculate\n参数: {'expression': '2*3',}\n```",
        calls=[("calculate", {"expression": "2*3"})],
    ),
    Case(
        "fenced-missing-closing-fence-and-brace",
        '```tool\nname: f\narguments: {"a": 1',
        errors=1,
    ),
    Case("fenced-no-name", '```tool\n参数: {"a": 1}\n```\nafter', content="\nafter", errors=1),
    Case(
        "other-fences-are-text",
        "```tools\nx\n```\n```python\nprint(1)\n```\n```toolkit",
        content="```tools\nx\n```\n```python\nprint(1)\n```\n```toolkit",
    ),
    Case("fence-opening-at-end-is-text", "see ```tool", content="see ```tool"),
    # reasoning
    Case(
        "think-then-call",
        '<think>I need the weather.</think>Checking.<tool_call>{"name": "w", "arguments": {}}</tool_call>',
        content="Checking.",
        reasoning="I need the weather.",
        calls=[("w", {})],
    ),
    Case(
        "a-call-inside-reasoning-ends-it",
        '<think>maybe <tool_call>{"name": "x", "arguments": {}}</tool_call>\n```tool\nname: y\n```</think>no',
        content="\nno",
        reasoning="maybe ",
        calls=[("x", {}), ("y", {})],
    ),
    Case(
        "lone-close-think-from-prompt",
        'The user wants time.\n</think>\n\nSure.<tool_call>{"name": "t", "arguments": {}}</tool_call>',
        content="\n\nSure.",
        reasoning="The user wants time.\n",
        calls=[("t", {})],
        reasoning_open=True,
    ),
    Case(
        "close-think-inside-call-is-data",
        '<tool_call>{"name": "w", "arguments": {"s": "</think>"}}</tool_call>',
        calls=[("w", {"s": "</think>"})],
        reasoning_open=False,
    ),
    Case(
        "unclosed-think-then-a-call-marker-at-the-end",
        "<think>still thinking <tool_call>",
        reasoning="still thinking ",
        errors=1,
    ),
    Case("unclosed-think-is-all-reasoning", "<think>still thinking", reasoning="still thinking"),
    Case(
        "prompt-opened-think-and-model-repeats-it",
        "<think>hmm</think>ok",
        content="ok",
        reasoning="hmm",
        reasoning_open=True,
    ),
    Case(
        "presumed-open-but-the-model-called-at-once",
        'Let me check. <tool_call>{"name": "t", "arguments": {}}</tool_call>',
        content="Let me check. ",
        calls=[("t", {})],
        reasoning_open=True,
    ),
    Case("presumed-open-but-only-an-answer", " It is noon.\n", content=" It is noon.\n", reasoning_open=True),
    # mixed, and restricting the format
    Case(
        "hermes-and-fenced-in-one-reply",
        '1<tool_call>{"name": "a", "arguments": {}}</tool_call>2```tool\nname: b\n```3',
        content="123",
        calls=[("a", {}), ("b", {})],
    ),
    Case(
        "format-hermes-leaves-fences",
        '```tool\nname: b\n```<tool_call>{"name": "a", "arguments": {}}</tool_call>',
        content="```tool\nname: b\n```",
        calls=[("a", {})],
        format="hermes",
    ),
    Case(
        "format-fenced-leaves-tool-call-tags",
        '<tool_call>{"name": "a"}</tool_call>```tool\nname: b\n```',
        content='<tool_call>{"name": "a"}</tool_call>',
        calls=[("b", {})],
        format="fenced",
    ),
]
