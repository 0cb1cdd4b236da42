"""`toolbridge agents`: the agent catalog (the config's agents and the stored ones, as the server shows
them), and create, edit, show and delete for the agents kept in the database."""

from __future__ import annotations

import json as json_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from toolbridge.agent.definition import AgentDefinition, ApprovalRule
from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    errors_reported,
    fail,
    load,
    print_json,
    setup_logging,
    stdout,
)
from toolbridge.cli._store import DbOption, open_store, when
from toolbridge.cli.app import app
from toolbridge.config import Config

if TYPE_CHECKING:
    from toolbridge.store import CatalogAgent, Store


agents_app = typer.Typer(
    help="Agents: list every one (config file and database); create, edit, show, delete stored ones."
)
app.add_typer(agents_app, name="agents")

NameArgument = Annotated[str, typer.Argument(metavar="NAME", help="The agent's name.")]
ModelOption = Annotated[str | None, typer.Option("--model", "-m", help="Model name, as configured.")]
InstructionsOption = Annotated[
    str | None, typer.Option("--instructions", "-i", help="Instructions that open the system prompt.")
]
InstructionsFileOption = Annotated[
    Path | None, typer.Option("--instructions-file", help="Read the instructions from this file.")
]
DescriptionOption = Annotated[
    str | None, typer.Option("--description", "-d", help="One line about the agent.")
]
ToolCallingOption = Annotated[
    bool | None, typer.Option("--tools/--no-tools", help="Whether the agent may call tools at all.")
]
ServersOption = Annotated[
    list[str] | None, typer.Option("--server", help="An MCP server it may use (repeat). Default: all.")
]
AllowOption = Annotated[
    list[str] | None, typer.Option("--allow", help="Only these tools, names or patterns (repeat).")
]
DenyOption = Annotated[list[str] | None, typer.Option("--deny", help="Never these tools (repeat).")]
MaxStepsOption = Annotated[int | None, typer.Option("--max-steps", min=1, help="Model requests per run.")]
ApprovalOption = Annotated[
    ApprovalRule | None,
    typer.Option("--approval", help="Default approval rule: auto (destructive tools), always or never."),
]


@agents_app.callback(invoke_without_command=True)
def agents(
    ctx: typer.Context,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """List every agent: the built-in default, the config file's and the database's, with where each is."""
    setup_logging(verbose)
    if ctx.invoked_subcommand is not None:
        return
    from toolbridge.store import agent_catalog

    settings = load(config)
    with open_store(db, config) as store:
        catalog = agent_catalog(settings, store)
    if json:
        print_json([agent_json(agent) for agent in catalog])
        return
    table = Table("name", "model", "tools", "servers", "description", "source", "updated")
    for agent in catalog:
        definition = agent.definition
        table.add_row(
            escape(agent.name),
            escape(definition.model or "(default)"),
            "on" if definition.tool_calling else "off",
            escape(", ".join(definition.servers) if definition.servers is not None else "all"),
            escape(f"unusable: {agent.problem}" if agent.problem else definition.description),
            escape(_source(agent)),
            when(agent.updated_at) if agent.updated_at else "",
        )
    stdout.print(table)
    if not any(agent.source == "database" for agent in catalog):
        stdout.print("No stored agents. Create one with `toolbridge agents create NAME --model M`.")


@agents_app.command()
def create(
    name: NameArgument,
    model: ModelOption = None,
    instructions: InstructionsOption = None,
    instructions_file: InstructionsFileOption = None,
    description: DescriptionOption = None,
    tool_calling: ToolCallingOption = None,
    server: ServersOption = None,
    allow: AllowOption = None,
    deny: DenyOption = None,
    max_steps: MaxStepsOption = None,
    approval: ApprovalOption = None,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Store a new agent. Options left out take the defaults (all servers, all tools, 10 steps)."""
    setup_logging(verbose)
    changes = _changes(
        model,
        instructions,
        instructions_file,
        description,
        tool_calling,
        server,
        allow,
        deny,
        max_steps,
        approval,
    )
    definition = _validated({"name": name, **_nested(changes)})
    settings = load(config)
    with open_store(db, config) as store:
        _checked(definition, settings)
        with errors_reported():
            record = store.create_agent(definition)
    stdout.print(f"Created agent {escape(record.name)!r}.")


@agents_app.command()
def edit(
    name: NameArgument,
    rename: Annotated[str | None, typer.Option("--rename", help="Give the agent this new name.")] = None,
    model: ModelOption = None,
    instructions: InstructionsOption = None,
    instructions_file: InstructionsFileOption = None,
    description: DescriptionOption = None,
    tool_calling: ToolCallingOption = None,
    server: ServersOption = None,
    all_servers: Annotated[bool, typer.Option("--all-servers", help="Let it use every server.")] = False,
    allow: AllowOption = None,
    allow_all: Annotated[bool, typer.Option("--allow-all", help="Drop the allow list.")] = False,
    deny: DenyOption = None,
    max_steps: MaxStepsOption = None,
    approval: ApprovalOption = None,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Change a stored agent: only the options given change."""
    setup_logging(verbose)
    changes = _changes(
        model,
        instructions,
        instructions_file,
        description,
        tool_calling,
        server,
        allow,
        deny,
        max_steps,
        approval,
    )
    if rename:
        changes["name"] = rename
    if all_servers:
        changes["servers"] = None
    if allow_all:
        changes["tools.allow"] = None
    if not changes:
        fail("nothing to change: give at least one option, e.g. --model or --instructions (see --help)")
    settings = load(config)
    with open_store(db, config) as store:
        _refuse_config_agent(name, settings, "edit")
        with errors_reported():
            current = store.get_agent(name).definition
        document = current.model_dump(mode="json")
        for key, value in _nested(changes).items():
            document[key] = {**document[key], **value} if key in ("tools", "approval") else value
        definition = _validated(document)
        _checked(definition, settings)
        with errors_reported():
            record = store.update_agent(name, definition)
    stdout.print(f"Updated agent {escape(record.name)!r}.")


@agents_app.command()
def show(
    name: NameArgument,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Print one agent's whole definition, from the config file or the database."""
    setup_logging(verbose)
    settings = load(config)
    with open_store(db, config) as store:
        agent = _found(settings, store, name)
    if json:
        print_json(agent_json(agent))
        return
    for key, value in agent_json(agent).items():
        shown = value if isinstance(value, str) else json_module.dumps(value, ensure_ascii=False)
        stdout.print(f"[bold]{key}[/]: {escape(shown)}")


@agents_app.command()
def delete(
    name: NameArgument, db: DbOption = None, config: ConfigOption = None, verbose: VerboseOption = False
) -> None:
    """Delete a stored agent. Its chats stay in the history."""
    setup_logging(verbose)
    settings = load(config)
    with open_store(db, config) as store:
        _refuse_config_agent(name, settings, "delete")
        with errors_reported():
            store.delete_agent(name)
    stdout.print(f"Deleted agent {escape(name)!r}.")


def agent_json(agent: CatalogAgent) -> dict[str, Any]:
    return {
        **agent.definition.model_dump(mode="json"),
        "source": agent.source,
        "location": agent.location,
        "created_at": agent.created_at.isoformat() if agent.created_at else None,
        "updated_at": agent.updated_at.isoformat() if agent.updated_at else None,
    }


def _source(agent: CatalogAgent) -> str:
    # The place itself (a path, a URL) is in `show` and `--json`: too long for a table column.
    return "config file" if agent.source == "config" else agent.source


def _found(config: Config, store: Store, name: str) -> CatalogAgent:
    from toolbridge.store import find_agent

    with errors_reported():
        return find_agent(config, store, name)


def _checked(definition: AgentDefinition, config: Config) -> None:
    """Refuse a model or server the config does not know, or a name the config already uses."""
    from toolbridge.store import check_agent

    with errors_reported():
        check_agent(definition, config)


def _refuse_config_agent(name: str, config: Config, action: str) -> None:
    if name in config.agents:
        fail(f"agent {name!r} is defined in the config file {config.path}; {action} it there")


def _changes(
    model: str | None,
    instructions: str | None,
    instructions_file: Path | None,
    description: str | None,
    tool_calling: bool | None,
    servers: list[str] | None,
    allow: list[str] | None,
    deny: list[str] | None,
    max_steps: int | None,
    approval: ApprovalRule | None,
) -> dict[str, Any]:
    """The options given, as dotted definition keys."""
    if instructions is not None and instructions_file is not None:
        fail("give --instructions or --instructions-file, not both")
    if instructions_file is not None:
        try:
            instructions = instructions_file.read_text()
        except OSError as exc:
            fail(f"cannot read --instructions-file {instructions_file}: {exc.strerror}")
    given = {
        "model": model,
        "instructions": instructions,
        "description": description,
        "tool_calling": tool_calling,
        "servers": servers or None,
        "tools.allow": allow or None,
        "tools.deny": deny or None,
        "max_steps": max_steps,
        "approval.default": approval,
    }
    return {key: value for key, value in given.items() if value is not None}


def _nested(changes: dict[str, Any]) -> dict[str, Any]:
    """`{"tools.allow": x}` -> `{"tools": {"allow": x}}`."""
    nested: dict[str, Any] = {}
    for key, value in changes.items():
        section, _, field = key.partition(".")
        if field:
            nested.setdefault(section, {})[field] = value
        else:
            nested[key] = value
    return nested


def _validated(document: dict[str, Any]) -> AgentDefinition:
    try:
        return AgentDefinition.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        fail(f"invalid agent setting {where}: {error['msg']}")
