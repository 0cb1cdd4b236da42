"""Idle connections: the server keeps them longer than its clients do, so the client always closes first.
When both ends give up on an idle connection at the same moment (uvicorn's default and httpx's are both
5 s), a request the client sends on it just then fails with a read error (seen under load as one failed
chat in hundreds)."""

from __future__ import annotations

import httpx
import openai

from toolbridge.server._uvicorn import KEEP_ALIVE_SECONDS


def test_serve_keeps_idle_connections_longer_than_http_clients_do() -> None:
    httpx_expiry = httpx.Limits().keepalive_expiry
    openai_expiry = openai.DEFAULT_CONNECTION_LIMITS.keepalive_expiry
    assert httpx_expiry is not None
    assert openai_expiry is not None
    load_balancers = 60.0  # AWS ALB and nginx proxies keep idle upstream connections this long
    assert max(httpx_expiry, openai_expiry, load_balancers) < KEEP_ALIVE_SECONDS
