"""Test helpers: an in-process model written by a function, and a scripted model behind the real OpenAI
chat-completions protocol.

`FunctionModel` is the quick one, for testing code that takes a `Model` (the agent loop, your tools in
an agent): a Python function writes each reply, in the test's own process::

    from toolbridge.testing import FunctionModel
    from toolbridge.types import ToolCall

    model = FunctionModel.replying(ToolCall(name="calculate", arguments={"expression": "15 + 27"}), "42.")
    result = await Agent(model).run("15 + 27?")
    assert result.output == "42." and model.requests[1].messages[-1].result.text == "42"

`ScriptedModelServer` tests the wire (adapters, the server): a model server on 127.0.0.1 whose every
request takes the next turn of a script and gets it streamed back over HTTP, so the code under test goes
through the real `openai` client (`ScriptedAnthropicServer`: the real `anthropic` one)::

    from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

    def test_the_loop_calls_the_tool_then_answers() -> None:
        script = [
            Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"})),
            Turn.text("The answer is 42.").expecting(lambda request: request.last_message["role"] == "tool"),
        ]
        with ScriptedModelServer(script) as server:
            client = server.openai_client()         # or openai.OpenAI(base_url=server.base_url, ...)
            ...                                     # run the code under test
            assert server.requests[1].messages[-1]["content"] == "42"
        # leaving the block checks that every turn was requested exactly once

The server records every request (`server.requests`) and how each reply went (`.reply`: chunks
sent, whether the client hung up early, timestamps), and tests can wait on that state with
`wait_for_reply()` / `wait_for_reply_async()` instead of sleeping.

`FunctionModel` and the script's types need the core alone. The servers are imported when first named
(uvicorn and Starlette, which come with the MCP SDK); their client helpers need the `openai` or
`anthropic` extra.
"""

from typing import TYPE_CHECKING, Any

from ._function import FunctionModel, FunctionReply, ReplyFunction, ReplyPiece
from ._records import RecordedRequest, ReplyRecord
from ._script import ErrorReply, Expectation, ToolCallSpec, Turn, Usage

if TYPE_CHECKING:
    from ._anthropic import ScriptedAnthropicServer
    from ._model import ScriptedModelServer

__all__ = [
    "ErrorReply",
    "Expectation",
    "FunctionModel",
    "FunctionReply",
    "RecordedRequest",
    "ReplyFunction",
    "ReplyPiece",
    "ReplyRecord",
    "ScriptedAnthropicServer",
    "ScriptedModelServer",
    "ToolCallSpec",
    "Turn",
    "Usage",
]


def __getattr__(name: str) -> Any:
    # The servers bring uvicorn and Starlette (thousands of modules with what they pull in): a test of an
    # agent on a `FunctionModel` should not pay for them.
    if name == "ScriptedModelServer":
        from ._model import ScriptedModelServer

        return ScriptedModelServer
    if name == "ScriptedAnthropicServer":
        from ._anthropic import ScriptedAnthropicServer

        return ScriptedAnthropicServer
    raise AttributeError(f"module 'toolbridge.testing' has no attribute {name!r}")
