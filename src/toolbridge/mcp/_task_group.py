"""Owning a task group across `__aenter__`/`__aexit__` without changing the caller's exceptions."""

from __future__ import annotations

from types import TracebackType

import anyio
import anyio.abc

__all__ = ["exit_task_group"]


async def exit_task_group(
    task_group: anyio.abc.TaskGroup,
    exc_type: type[BaseException] | None,
    exc: BaseException | None,
    tb: TracebackType | None,
) -> bool | None:
    """Exit `task_group` on behalf of an `async with` block that raised `exc` (or nothing).

    anyio wraps an exception raised in a task group's body in an ExceptionGroup. Our users' block
    is not our body, so their `ServerStartError` must reach them as itself: cancel our tasks and
    exit cleanly, then let the original exception continue. Cancellation passes through as is, so
    anyio's cancel scopes still work.
    """
    if exc is None or isinstance(exc, anyio.get_cancelled_exc_class()):
        return await task_group.__aexit__(exc_type, exc, tb)
    task_group.cancel_scope.cancel()
    await task_group.__aexit__(None, None, None)
    return False
