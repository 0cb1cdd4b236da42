"""Which MCP revision a session speaks, and what the stateless 2026-07-28 revision needs besides calls.

The SDK's `Client` negotiates: in `auto` it probes `server/discover` and falls back to the 2025-11-25
`initialize` handshake for servers that do not know it. The probe waits `discover_timeout` seconds (`_sdk.ProbingClient`), and
a server that did not answer it is not probed again in this process. On the new revision a server sends change
notifications only on a `subscriptions/listen` stream the client opened, so one is kept open for tool
changes; its events reach the session's message handler like the older revision's notifications do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
from mcp import Client, ClientSession
from mcp.client.client import ConnectMode
from mcp_types import LoggingLevel
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.config.model import ProtocolChoice, ServerConfig

__all__ = [
    "CONNECT_MODES",
    "LISTEN_ACK_WAIT",
    "STATELESS_LOG_LEVEL",
    "connect_mode",
    "follow_tool_changes",
    "forget_revision",
    "remember_revision",
    "revision_advice",
    "speaks_stateless_revision",
]

logger = logging.getLogger(__name__)

CONNECT_MODES: dict[ProtocolChoice, str] = {"auto": "auto", "2025-11-25": "legacy"}
"""The config's `protocol` as the SDK `Client`'s `mode`."""


_spoke_handshake: set[tuple[object, ...]] = set()
"""Servers that, in this process, did not answer `server/discover` and spoke the 2025-11-25 handshake.
Reconnects and later pools go straight to `initialize` with them. A server that answered is sent
`server/discover` again: there it is not a probe but the handshake itself (fresh capabilities, and proof
that the server is there), one round trip like `initialize`."""


def _server_key(config: ServerConfig) -> tuple[object, ...]:
    # Where the server is, not what it is called: a pool may name the same server differently. A stdio
    # server's environment is part of it (one command may be a different server with other settings).
    return (config.transport, config.describe(), config.cwd or "", tuple(sorted(config.env.items())))


def connect_mode(config: ServerConfig) -> ConnectMode:
    """The SDK `Client`'s `mode` for connecting to `config`'s server."""
    if config.protocol == "auto" and _server_key(config) in _spoke_handshake:
        return "legacy"
    return CONNECT_MODES[config.protocol]


def remember_revision(config: ServerConfig, session: ClientSession) -> None:
    """Note which revision `config`'s server spoke (when it was not pinned in the config)."""
    if config.protocol != "auto":
        return
    if speaks_stateless_revision(session.protocol_version):
        _spoke_handshake.discard(_server_key(config))
    else:
        _spoke_handshake.add(_server_key(config))


def forget_revision(config: ServerConfig) -> None:
    """A connect failed: the server may have changed, so the next one probes again."""
    _spoke_handshake.discard(_server_key(config))


def speaks_stateless_revision(protocol_version: str | None) -> bool:
    return protocol_version in MODERN_PROTOCOL_VERSIONS


def revision_advice(protocol_version: str | None, error: str) -> str:
    """What to do when a tool failed for asking its client mid-call, which 2026-07-28 rules out; else ''."""
    # The SDK's server names the missing back-channel in its message; there is no code of its own.
    if not speaks_stateless_revision(protocol_version) or "back-channel" not in error:
        return ""
    return (
        " The tool asks the client with a request of its own, which the 2026-07-28 revision does not "
        'allow; set "protocol": "2025-11-25" for this server in the config.'
    )


STATELESS_LOG_LEVEL: LoggingLevel = "info"
"""The level asked for on 2026-07-28 when the config sets none: there a server logs only to requests that
ask for it, where on 2025-11-25 it sends what it likes until told a level."""

LISTEN_ACK_WAIT = 5.0
"""Seconds a connect waits for the tool-change stream to be acknowledged before it goes on without."""


async def follow_tool_changes(
    client: Client,
    server: str,
    listening: anyio.Event,
    on_lost: Callable[[str], None] = lambda why: None,
) -> None:
    """Keep a `subscriptions/listen` stream for tool changes open; `listening` is set once it is
    acknowledged, or once it is clear that there will be none.

    Nothing to do on the older revision (notifications come unasked) or for a server whose tools
    never change. A server that refuses the stream only loses live tool updates. One that ends an
    acknowledged stream has gone away or restarted: `on_lost(why)` is told (the stateless revision has
    no ping, so this is how an idle HTTP server's end is noticed).
    """
    capabilities = client.server_capabilities
    tools, prompts, resources = capabilities.tools, capabilities.prompts, capabilities.resources
    # Prompt and resource list changes ride on the same stream (their listings are cached too).
    tools_changed = bool(tools and tools.list_changed)
    prompts_changed = bool(prompts and prompts.list_changed)
    resources_changed = bool(resources and resources.list_changed)
    try:
        if not speaks_stateless_revision(client.protocol_version):
            return
        if not (tools_changed or prompts_changed or resources_changed):
            return
        async with client.listen(
            tools_list_changed=tools_changed,
            prompts_list_changed=prompts_changed,
            resources_list_changed=resources_changed,
        ) as subscription:
            listening.set()
            async for _change in subscription:
                pass  # the session's message handler has seen it as a tools/list_changed notification
        on_lost("the server closed its subscriptions/listen stream")
    except Exception as exc:  # refused, dropped, a transport error: following changes is best effort
        logger.debug("server %r: no stream of tool changes: %s", server, exc)
        if listening.is_set():
            on_lost(f"its subscriptions/listen stream dropped ({exc})")
    finally:
        listening.set()
