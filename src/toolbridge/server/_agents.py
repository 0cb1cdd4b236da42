"""The agents the server offers, their models (resolved once, reused by every run), and starting runs.

Agents come from the config's `agents` section (plus the built-in `default`) and from the store
(`toolbridge agents create`); a name in both is the config's. Definitions are read again for each run,
so an agent edited in the store takes effect on its next run.
"""

from __future__ import annotations

import anyio

from toolbridge.agent import Agent, AgentDefinition, Approver
from toolbridge.config import Config
from toolbridge.models import Model, ModelSettings, resolve_model_async
from toolbridge.server._errors import ApiError
from toolbridge.store import AgentNotFoundError, Store, agent_definitions, find_agent_definition
from toolbridge.tools import ToolRegistry

__all__ = ["AgentCatalog"]


class AgentCatalog:
    def __init__(self, config: Config, store: Store, registry: ToolRegistry) -> None:
        self.config = config
        self.store = store
        self.registry = registry
        self._models: dict[str | None, Model] = {}
        self._resolving = anyio.Lock()

    async def definitions(self) -> list[AgentDefinition]:
        """Every agent, `default` first, then the config's, then the store's, each name once."""
        return await anyio.to_thread.run_sync(agent_definitions, self.config, self.store)

    async def definition(self, name: str, *, param: str) -> AgentDefinition:
        """The agent called `name`; a 404 listing the agents if there is none."""
        try:
            return await anyio.to_thread.run_sync(find_agent_definition, self.config, self.store, name)
        except AgentNotFoundError as error:
            raise ApiError(404, str(error), param=param, code="model_not_found") from None

    async def model_for(self, definition: AgentDefinition) -> Model:
        """The agent's model, resolved on first use (so one agent's missing key does not stop the server)."""
        async with self._resolving:
            if definition.model not in self._models:
                model = await resolve_model_async(definition.model, self.config)
                self._models[definition.model] = model
            return self._models[definition.model]

    def agent(
        self,
        model: Model,
        definition: AgentDefinition,
        *,
        approve: Approver | None,
        settings: ModelSettings | None = None,
    ) -> Agent:
        """An agent over the shared tools for one run, with that run's approver (None: decline)."""
        return Agent(model, self.registry, definition, approve=approve, settings=settings)

    async def aclose(self) -> None:
        for model in self._models.values():
            await model.aclose()
        self._models.clear()
