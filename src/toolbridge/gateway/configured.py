"""The gateway a config and one of its agents describe: what `toolbridge gateway` serves.

```python
setup = GatewaySetup.of(config, agent="excel-helper")
gateway = setup.build(call_log=CallLog(store.log_tool_calls))
async with gateway.toolbox:
    await gateway.serve_stdio()
```
The command line, the HTTP app and the tests build their gateway here, so they serve the same one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolbridge.agent.definition import AgentDefinition, load_agent_definition
from toolbridge.config import Config
from toolbridge.config.gateway import TokenReach
from toolbridge.gateway._approval import ApprovalGate
from toolbridge.gateway._calls import ClientCalls
from toolbridge.gateway._forward import gateway_features
from toolbridge.gateway.server import Gateway
from toolbridge.tools import Toolbox
from toolbridge.types import NATIVE_SOURCE, ToolSpec

if TYPE_CHECKING:
    from toolbridge.store import CallLog

__all__ = ["GatewaySetup"]


@dataclass(frozen=True)
class GatewaySetup:
    config: Config
    """The config, narrowed to the agent's servers when it lists them."""
    definition: AgentDefinition
    native: bool = True
    """Whether toolbridge's own tools are offered beside the servers'."""

    @classmethod
    def of(cls, config: Config, agent: str | None = None, *, native: bool = True) -> GatewaySetup:
        """The gateway for `agent` (None: the default agent's tool rules and approval policy, as on every
        surface). Raises `ConfigError` for an unknown agent or one using an unset `${VAR}`."""
        definition = load_agent_definition(config, agent)
        if definition.servers is not None:
            # Only the agent's servers: the others would be started (once per client, if unshared) for
            # tools no client may see.
            kept = {name: server for name, server in config.servers.items() if name in definition.servers}
            config = config.model_copy(update={"servers": kept})
        return cls(config, definition, native)

    def offers(self, tool: ToolSpec) -> bool:
        if not self.native and tool.source == NATIVE_SOURCE:
            return False
        return self.definition.offers(tool)

    def build(
        self, *, call_log: CallLog | None = None, token_rules: Mapping[str, TokenReach] | None = None
    ) -> Gateway:
        """The gateway, on a toolbox not yet opened (`async with gateway.toolbox`, or an app's lifespan)."""
        calls = ClientCalls()  # the servers' requests and logs go to the client whose call caused them
        toolbox = Toolbox(self.config, native=self.native, features=gateway_features(calls))
        return Gateway(
            toolbox,
            offers=self.offers,
            left_out=self.definition.left_out_reason,
            servers=self.definition.servers,
            call_log=call_log,
            timeout=self.definition.call_timeout,
            token_rules=token_rules,
            approval=ApprovalGate(self.definition.approval, self.config.gateway.approval),
            calls=calls,
        )
