"""Appends messages to one chat until it is killed; prints `committed N` after each append returns, and
goes on to the next once a line comes on stdin (so the test knows how far it got when it kills it).

    python store_crash_writer.py DB_URL CHAT_ID

`expected_message(position)` is the message at each position, for the test to check against.
"""

from __future__ import annotations

import sys

from toolbridge.store import Store
from toolbridge.types import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)

# Big enough that an append spans many pages, so a kill often lands inside a write.
FILLER = "lorem ipsum dolor sit amet " * 800


def expected_message(position: int) -> Message:
    kind = position % 3
    if kind == 0:
        return UserMessage(content=f"question {position} {FILLER}")
    if kind == 1:
        return AssistantMessage(
            content=f"answer {position}",
            reasoning=FILLER,
            tool_calls=[
                ToolCall(name="lookup", arguments={"n": position, "text": FILLER}, id=f"call_{position}")
            ],
        )
    return ToolMessage(
        name="lookup",
        result=ToolResult(
            call_id=f"call_{position - 1}", content=[TextPart(text=f"{position} {FILLER}")], server="s"
        ),
    )


def main() -> None:
    url, chat_id = sys.argv[1], int(sys.argv[2])
    store = Store(url)
    position = len(store.get_messages(chat_id))
    while True:
        store.append_message(chat_id, expected_message(position))
        print(f"committed {position}", flush=True)
        if not sys.stdin.readline():
            return  # the test is gone
        position += 1


if __name__ == "__main__":
    main()
