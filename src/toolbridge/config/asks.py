"""What a server may ask of toolbridge as its MCP client: a completion from a model (`sampling`) and
the folders it may work in (`roots`). Both are keys of a server's entry:

```jsonc
"mcpServers": {
  "writer": {
    "command": "writer-mcp",
    "sampling": {"model": "fast", "max_tokens": 1024, "approval": "never", "rate_limit": 20},
    "roots": ["~/notes", "file:///srv/shared"]
  }
}
```
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_SAMPLING_RATE_LIMIT", "SamplingApproval", "SamplingConfig"]

DEFAULT_SAMPLING_RATE_LIMIT = 10

SamplingApproval = Literal["always", "never"]
"""`always`: the user approves each request (declined where nobody can be asked). `never`: answered
without asking."""


class SamplingConfig(BaseModel):
    """A server's `sampling` key: which model answers its `sampling/createMessage` requests, and when."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None
    """A model name the models layer resolves; None: the model of the agent that is running."""
    max_tokens: int | None = Field(default=None, gt=0)
    """The most tokens a reply may have, whatever the server asks for; None: the server's number. The
    model's own `max_tokens` caps it too, and in `toolbridge serve` what the run's user has left."""
    approval: SamplingApproval = "always"
    rate_limit: int | None = Field(default=DEFAULT_SAMPLING_RATE_LIMIT, ge=0)
    """Requests answered per minute; more are refused. None: no limit."""
