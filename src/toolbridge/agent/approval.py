"""Asking the user before a call runs: the request an approver sees, and the approver type.

```python
async def ask(request: ApprovalRequest) -> bool:
    return await prompt_user(f"Run {request.call.name}({request.call.arguments})? ({request.reason})")

agent = Agent(model, toolbox, approve=ask)
```

Approvers are asked one call at a time, even when the model made several calls at once, so an
interactive prompt never interleaves. With no approver, calls that need approval are declined. An
exception an approver raises ends the run (its other calls are cancelled) and reaches the caller of
`run()` or the `async with agent.stream(...)` block as itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from toolbridge.types import ToolCall, ToolSpec

__all__ = ["ApprovalRequest", "Approver", "approve_all"]


@dataclass(frozen=True)
class ApprovalRequest:
    call: ToolCall
    tool: ToolSpec
    """The tool's full definition: its description, server (`tool.source`) and annotations."""
    reason: str
    """Why approval is needed (the tool is destructive, or which policy rule says so)."""


Approver = Callable[[ApprovalRequest], Awaitable[bool]]
"""Returns True to run the call, False to decline it (the model is told the user declined)."""


async def approve_all(request: ApprovalRequest) -> bool:
    """An approver that says yes to everything (the CLI's `--yes`)."""
    return True
