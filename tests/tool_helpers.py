"""Python tools the tests of the call path share: one that answers, one that never does."""

from __future__ import annotations

import anyio

from toolbridge.tools import tool

__all__ = ["shout", "wait_forever"]


@tool
def shout(text: str) -> str:
    """Repeat the text in capitals.

    Args:
        text: What to shout.
    """
    return text.upper()


@tool
async def wait_forever() -> str:
    """Wait for something that never happens."""
    await anyio.Event().wait()
    return "unreachable"
