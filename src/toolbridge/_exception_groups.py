"""Task groups wrap what fails inside them in an `ExceptionGroup`; a caller should see the error itself.

An approver the user wrote, or a bug, fails one task of the group that runs a step's calls (and then the
group that runs the loop): the user catches `PermissionError`, not an `ExceptionGroup` around one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["sole_failure", "unwrapped"]


def sole_failure(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one error in a (nested) group, or None when there are several."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        error = pending.pop()
        if isinstance(error, BaseExceptionGroup):
            pending.extend(error.exceptions)
        else:
            leaves.append(error)
    return leaves[0] if len(leaves) == 1 else None


@contextmanager
def unwrapped() -> Iterator[None]:
    """Let a task group's only failure out as itself; several failures stay grouped."""
    try:
        yield
    except BaseExceptionGroup as group:
        error = sole_failure(group)
        if error is None:
            raise
        # The group is noise in the traceback; the error keeps its own cause.
        raise error from error.__cause__
