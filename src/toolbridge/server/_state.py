"""What the routes share for the app's lifetime, set up by its lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from toolbridge.server._agents import AgentCatalog
from toolbridge.server._settings import ServerSettings
from toolbridge.server.web.asks import WebAsker
from toolbridge.server.web.chats import ChatHub
from toolbridge.store import Store
from toolbridge.tools import Toolbox

__all__ = ["ServerState"]


@dataclass(frozen=True)
class ServerState:
    settings: ServerSettings
    store: Store
    toolbox: Toolbox
    catalog: AgentCatalog
    chats: ChatHub
    asker: WebAsker
    """Servers' questions waiting for an answer on the web page."""

    @staticmethod
    def of(request: Request) -> ServerState:
        state: ServerState = request.app.state.toolbridge
        return state
