"""The agent catalog: the built-in default, the config's agents and the stored ones, as one list.

A name in the config beats the same name in the database (the config is what the user edits by hand;
`toolbridge agents create` refuses such a name). Each entry says where it came from, and errors about an
agent name that place. Stored agents are checked against the config when they are written: a model or
MCP server the config does not know is refused, listing the known ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from toolbridge.config import Config, known_servers
from toolbridge.config.agents import DEFAULT_AGENT_NAME, AgentDefinition
from toolbridge.errors import ConfigError
from toolbridge.store._errors import AgentNotFoundError, InvalidAgentError
from toolbridge.store._records import AgentRecord

if TYPE_CHECKING:
    from toolbridge.store.store import Store

if TYPE_CHECKING:
    from toolbridge.models import Model

# The agent and models packages are imported where they are used: the store opens without them (and the
# MCP SDK and model SDKs they load).

__all__ = ["AgentSource", "CatalogAgent", "agent_catalog", "check_agent", "find_agent", "resolve_agent_model"]

AgentSource = Literal["built-in", "config", "database"]


@dataclass(frozen=True)
class CatalogAgent:
    """An agent and where it is defined."""

    definition: AgentDefinition
    source: AgentSource
    location: str | None = None
    """The config file's path, or the database's URL (without password)."""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    """When a stored agent was created and last changed."""
    problem: str | None = None
    """Why the agent cannot be used (a stored definition that no longer reads); listed, never run."""

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def origin(self) -> str:
        """Where the agent comes from, for messages: "the config file /home/me/toolbridge.json"."""
        if self.source == "built-in":
            return "the built-in default agent"
        place = "config file" if self.source == "config" else "database"
        return f"defined in the {place} {self.location}" if self.location else f"defined in the {place}"


def _from_config(config: Config, name: str) -> CatalogAgent:
    if name == DEFAULT_AGENT_NAME and name not in config.agents:
        return CatalogAgent(AgentDefinition(), "built-in")
    from toolbridge.agent.definition import load_agent_definition

    return CatalogAgent(load_agent_definition(config, name), "config", _path(config))


def agent_catalog(config: Config, store: Store | None) -> list[CatalogAgent]:
    """Every agent: `default` first, then the config's, then the store's (a name in both is the config's)."""
    # Listed as written: an unset `${VAR}` in one agent stops only runs of that agent.
    found = [
        CatalogAgent(config.agents[name], "config", _path(config))
        if name in config.agents
        else CatalogAgent(AgentDefinition(), "built-in")
        for name in config.agent_names
    ]
    if store is not None:
        found += [
            _from_record(record, store)
            for record in store.list_agents()
            if record.name not in config.agent_names
        ]
    return found


def find_agent(config: Config, store: Store | None, name: str | None) -> CatalogAgent:
    """The agent called `name` (None: the default). Raises `AgentNotFoundError` naming the known agents."""
    if name is None or name in config.agent_names or store is None:
        return _from_config(config, name or DEFAULT_AGENT_NAME)
    try:
        record = store.get_agent(name)
    except AgentNotFoundError:
        known = ", ".join(agent.name for agent in agent_catalog(config, store))
        raise AgentNotFoundError(name, known=known) from None
    if record.problem is not None:
        raise InvalidAgentError(record.problem)
    return _from_record(record, store)


def _from_record(record: AgentRecord, store: Store) -> CatalogAgent:
    return CatalogAgent(
        record.definition,
        "database",
        store.safe_url,
        record.created_at,
        record.updated_at,
        problem=record.problem,
    )


def check_agent(definition: AgentDefinition, config: Config) -> None:
    """Refuse a definition to be stored whose model or MCP servers `config` does not know, or whose name
    the config already uses. Raises `InvalidAgentError` listing what is known."""
    if definition.name in config.agent_names:
        place = f"the config file {config.path}" if definition.name in config.agents else "toolbridge"
        raise InvalidAgentError(f"agent {definition.name!r} is already defined by {place}; pick another name")
    if definition.model is not None:
        from toolbridge.models import model_name_problem

        problem = model_name_problem(definition.model, config)
        if problem is not None:
            raise InvalidAgentError(f"agent {definition.name!r}: {problem}")
    unknown = [server for server in definition.servers or [] if server not in config.servers]
    if unknown:
        raise InvalidAgentError(
            f"agent {definition.name!r}: no MCP server named {unknown[0]!r}; {known_servers(config)}"
        )


def resolve_agent_model(agent: CatalogAgent, config: Config) -> Model:
    """The agent's own model. Errors say which agent wanted it and where that agent is defined."""
    from toolbridge.models import resolve_model

    try:
        return resolve_model(agent.definition.model, config)
    except ConfigError as error:
        if agent.definition.model is None:
            raise  # the config's default model: nothing the agent chose
        raise ConfigError(
            f"agent {agent.name!r} ({agent.origin}) uses model {agent.definition.model!r}: {error}"
        ) from error


def _path(config: Config) -> str | None:
    return str(config.path) if config.path is not None else None
