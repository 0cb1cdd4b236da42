"""Test helpers: an in-process model written by a function, and a scripted model behind the real OpenAI
chat-completions protocol.

`FunctionModel` is the quick one, for testing code that takes a `Model` (the agent loop, your tools in
an agent): a Python function writes each reply, in the test's own process::

    from toolbridge.testing import FunctionModel
    from toolbridge.types import ToolCall

    model = FunctionModel.replying(ToolCall(name="calculate", arguments={"expression": "15 + 27"}), "42.")
    result = await Agent(model).run("15 + 27?")
    assert result.output == "42." and model.requests[1].messages[-1].result.text == "42"

`ScriptedModel` tests the wire (adapters, the server): each request takes the next turn of a script and
gets it streamed back over HTTP on 127.0.0.1, so the code under test goes through the real `openai`
client::

    from toolbridge.testing import ScriptedModel, ToolCallSpec, Turn

    def test_the_loop_calls_the_tool_then_answers() -> None:
        script = [
            Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"})),
            Turn.text("The answer is 42.").expecting(lambda request: request.last_message["role"] == "tool"),
        ]
        with ScriptedModel(script) as model:
            client = model.openai_client()          # or openai.OpenAI(base_url=model.base_url, ...)
            ...                                     # run the code under test
            assert model.requests[1].messages[-1]["content"] == "42"
        # leaving the block checks that every turn was requested exactly once

The server records every request (`model.requests`) and how each reply went (`.reply`: chunks
sent, whether the client hung up early, timestamps), and tests can wait on that state with
`wait_for_reply()` / `wait_for_reply_async()` instead of sleeping.
"""

from ._anthropic import ScriptedAnthropicModel
from ._function import FunctionModel, FunctionReply, ReplyFunction, ReplyPiece
from ._model import ScriptedModel
from ._records import RecordedRequest, ReplyRecord
from ._script import ErrorReply, Expectation, ToolCallSpec, Turn, Usage

__all__ = [
    "ErrorReply",
    "Expectation",
    "FunctionModel",
    "FunctionReply",
    "RecordedRequest",
    "ReplyFunction",
    "ReplyPiece",
    "ReplyRecord",
    "ScriptedAnthropicModel",
    "ScriptedModel",
    "ToolCallSpec",
    "Turn",
    "Usage",
]
