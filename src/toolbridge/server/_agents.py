"""The agents the server offers, their models (resolved once, reused by every run), and starting runs.

Agents are the one catalog `toolbridge agents` shows too (`toolbridge.store.agent_catalog`): the
built-in `default`, the config's `agents` and the stored ones. Definitions are read again for each run,
so an agent edited in the store takes effect on its next run.
"""

from __future__ import annotations

from functools import partial

import anyio

from toolbridge.agent import Agent, AgentDefinition, Approver
from toolbridge.config import Config
from toolbridge.errors import ToolbridgeError
from toolbridge.models import Model, ModelSettings, model_name_problem, resolve_model
from toolbridge.server._errors import ApiError
from toolbridge.store import (
    AgentNotFoundError,
    CatalogAgent,
    InvalidAgentError,
    Store,
    agent_catalog,
    find_agent,
    resolve_agent_model,
)
from toolbridge.tools import ToolPipeline

__all__ = ["AgentCatalog"]


class AgentCatalog:
    def __init__(self, config: Config, store: Store, calls: ToolPipeline) -> None:
        self.config = config
        self.store = store
        self.calls = calls
        """The path every run's tool calls take (with the toolbox's call log, spans and metrics)."""
        self._models: dict[str | None, Model] = {}
        self._resolving = anyio.Lock()
        self._found: dict[str, CatalogAgent] = {}
        """The agents last looked up, by name: where they came from, for errors about them."""

    async def agents(self) -> list[CatalogAgent]:
        """Every agent, `default` first, then the config's, then the store's, each name once."""
        return await anyio.to_thread.run_sync(agent_catalog, self.config, self.store)

    async def definition(self, name: str, *, param: str) -> AgentDefinition:
        """The agent called `name`; a 404 listing the agents if there is none."""
        try:
            found = await anyio.to_thread.run_sync(find_agent, self.config, self.store, name)
        except AgentNotFoundError as error:
            raise ApiError(404, str(error), param=param, code="model_not_found") from None
        except InvalidAgentError as error:
            raise ApiError(422, str(error), param=param, code="invalid_agent") from None
        self._found[found.name] = found
        return found.definition

    async def pass_through_model(self, name: str) -> Model | None:
        """The model `name` names, for a pass-through request; None when an agent has that name (an
        agent wins). A 404 naming the agents and models when it names neither."""
        if name in self.config.agent_names:
            return None
        problem = model_name_problem(name, self.config)
        if problem is None:
            # A model's name, asked on every request: one cheap lookup, as a stored agent of that name wins.
            if await anyio.to_thread.run_sync(self.store.has_agent, name):
                return None
        else:
            try:
                await anyio.to_thread.run_sync(find_agent, self.config, self.store, name)
                return None
            except InvalidAgentError:
                return None  # an agent of that name, broken: the agent's path says so
            except AgentNotFoundError as error:
                message = f"{error}. Nor is it a model: {problem}"
                raise ApiError(404, message, param="model", code="model_not_found") from None
        return await self.named_model(name)

    async def named_model(self, name: str) -> Model:
        """The model `name` names (resolved once); a 503 saying why when it cannot be used."""
        async with self._resolving:
            if name not in self._models:
                try:
                    self._models[name] = await anyio.to_thread.run_sync(
                        partial(resolve_model, name, self.config), abandon_on_cancel=True
                    )
                except ToolbridgeError as error:
                    raise ApiError(503, f"model {name!r} cannot be used: {error}", param="model") from error
            return self._models[name]

    def model_names(self) -> list[str]:
        """The config's models: what pass-through requests may name (so may `provider:model`), and
        what a chat may be switched to."""
        return list(self.config.models)

    async def model_for(self, definition: AgentDefinition, *, chosen: str | None = None) -> Model:
        """The agent's model, or the one its chat `chosen`; resolved on first use (so one agent's
        missing key does not stop the server)."""
        if chosen is not None:
            return await self.named_model(chosen)
        agent = self._found.get(definition.name) or CatalogAgent(definition, "built-in")
        async with self._resolving:
            if definition.model not in self._models:
                # Off the event loop (it may probe a server), and cancelling stops the wait at once.
                model = await anyio.to_thread.run_sync(
                    partial(resolve_agent_model, agent, self.config), abandon_on_cancel=True
                )
                self._models[definition.model] = model
            return self._models[definition.model]

    def agent(
        self,
        model: Model,
        definition: AgentDefinition,
        *,
        approve: Approver | None,
        settings: ModelSettings | None = None,
        cache_scope: str,
        chat_id: int | None = None,
        user_id: int | None = None,
    ) -> Agent:
        """An agent over the shared tools for one run, with that run's approver (None: nobody can be
        asked, so calls needing approval are refused).

        `cache_scope` names its conversation, whose cached tool results no other conversation sees;
        `chat_id` and `user_id` say whose its calls are in the call log.
        """
        return Agent(
            model,
            self.calls,
            definition,
            approve=approve,
            settings=settings,
            cache_scope=cache_scope,
            chat_id=chat_id,
            user_id=user_id,
        )

    async def aclose(self) -> None:
        for model in self._models.values():
            await model.aclose()
        self._models.clear()
