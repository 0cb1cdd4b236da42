"""Finding an agent by name wherever it is defined: the built-in default, the config, or the store."""

from __future__ import annotations

from toolbridge.agent import AgentDefinition, load_agent_definition
from toolbridge.agent.definition import DEFAULT_AGENT_NAME
from toolbridge.config import Config
from toolbridge.store._errors import AgentNotFoundError
from toolbridge.store.store import Store

__all__ = ["agent_definitions", "find_agent_definition"]


def _config_agent_names(config: Config) -> list[str]:
    section = config.raw.get("agents", {})
    names = list(section) if isinstance(section, dict) else []
    return [DEFAULT_AGENT_NAME, *(name for name in names if name != DEFAULT_AGENT_NAME)]


def agent_definitions(config: Config, store: Store) -> list[AgentDefinition]:
    """Every agent, `default` first, then the config's, then the store's; a name in both is the config's."""
    configured = _config_agent_names(config)
    found = [load_agent_definition(config, name) for name in configured]
    found += [record.definition for record in store.list_agents() if record.definition.name not in configured]
    return found


def find_agent_definition(config: Config, store: Store | None, name: str | None) -> AgentDefinition:
    """The agent called `name` (None: the default). Raises `AgentNotFoundError` naming the known agents."""
    if name is None or name in _config_agent_names(config) or store is None:
        return load_agent_definition(config, name)
    try:
        return store.get_agent(name).definition
    except AgentNotFoundError:
        known = ", ".join(definition.name for definition in agent_definitions(config, store))
        raise AgentNotFoundError(name, known=known) from None
