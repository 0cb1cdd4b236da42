"""Task groups wrap what fails inside them in an `ExceptionGroup`; a caller should see the error itself.

`leaf_errors` reads the errors out of a (nested) group; every layer that explains or re-raises a task
group's failure goes through it. `unwrapped` lets a group's only failure out as itself: an approver the
user wrote, or a bug, fails one task of the group that runs a step's calls (and then the group that runs
the loop), and the user catches `PermissionError`, not an `ExceptionGroup` around one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["leaf_errors", "sole_failure", "unwrapped"]


def leaf_errors(error: BaseException) -> list[BaseException]:
    """The errors in a (nested) exception group, depth first, in the group's order; `[error]` for an
    error that is no group."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaf_errors(inner)]
    return [error]


def sole_failure(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one error in a (nested) group, or None when there are several."""
    leaves = leaf_errors(group)
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
