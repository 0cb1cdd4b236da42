"""Worker processes for the concurrency tests: open one store at the same moment as the others, write.

Run by `multiprocessing` (spawn): `open_and_write` opens the store at `url` once every worker is at
the barrier, creates a chat and appends to it; `append_to_chat` appends to one chat that others
append to as well. Each returns through `results` what it did, or the error it got.
"""

from __future__ import annotations

import traceback
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

from toolbridge.store import Store
from toolbridge.types import UserMessage


def open_and_write(urls: list[str], barrier: Barrier, results: Queue[Any]) -> None:
    """For each url in turn: wait for every worker, then open it (fresh: all migrate at once) and write."""
    for url in urls:
        barrier.wait()
        try:
            with Store(url) as store:
                chat = store.create_chat(agent="opener")
                store.append_message(chat.id, UserMessage(content="hello"))
            results.put(("ok", url))
        except Exception:
            results.put(("error", traceback.format_exc()))


def append_to_chat(
    url: str, chat_id: int, writer: int, count: int, barrier: Barrier, results: Queue[Any]
) -> None:
    """Append `count` messages to the chat, starting when every writer is ready."""
    try:
        with Store(url) as store:
            barrier.wait()
            positions = [
                store.append_message(chat_id, UserMessage(content=f"writer {writer} message {n}")).position
                for n in range(count)
            ]
        results.put(("ok", positions))
    except Exception:
        results.put(("error", traceback.format_exc()))
