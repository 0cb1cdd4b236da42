"""Asking the user before a call runs: the request an approver sees, and the approver type.

```python
async def ask(request: ApprovalRequest) -> bool:
    return await prompt_user(f"Run {request.call.name}({request.call.arguments})? ({request.reason})")

agent = Agent(model, toolbox, approve=ask)
```

Which calls need approval is one policy (`ApprovalPolicy`, an agent's `approval`); each surface answers
in its own way: the CLI asks in the terminal, the web page shows a card, the gateway asks its client
(an elicitation form, or `input_required` on 2026-07-28), tools over HTTP cannot ask and refuse.

An agent's approvers are asked one call at a time, even when the model made several calls at once, so
an interactive prompt never interleaves. With no approver, calls that need approval are refused. An
approver may also raise a `ToolError` (`toolbridge.tools.refusals`): the call is refused with its
message. Any other exception an agent's approver raises ends the run (its other calls are cancelled)
and reaches the caller of `run()` or the `async with agent.stream(...)` block as itself.
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
