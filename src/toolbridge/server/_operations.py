"""What operators and orchestrators ask: `/healthz` (the process answers), `/readyz` (it can serve:
the database answers at this toolbridge's schema revision, and it is not shutting down) and `/metrics`
(Prometheus' text format).

/healthz and /readyz need no token (probes carry none, and they tell nothing but up or down); /metrics
needs the token when the server has one, like the API, and once users exist it is for admins (and the
token) only: its labels name every user's agents and tools.
"""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from toolbridge.server._access import require_admin
from toolbridge.server._state import ServerState
from toolbridge.telemetry.metrics import METRICS

__all__ = ["router"]

router = APIRouter(include_in_schema=False)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    state: ServerState | None = getattr(request.app.state, "toolbridge", None)
    if state is None or getattr(request.app.state, "shutting_down", False):
        return JSONResponse({"status": "not ready", "reason": "shutting down"}, status_code=503)
    problem = await anyio.to_thread.run_sync(state.store.readiness_problem)
    if problem is not None:
        return JSONResponse({"status": "not ready", "reason": problem}, status_code=503)
    return JSONResponse({"status": "ready"})


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    require_admin(request, "read the metrics (they cover every user's runs and tools)")
    return Response(generate_latest(METRICS), media_type=CONTENT_TYPE_LATEST)
