"""The routes of `/v1/messages`. The `anthropic` SDK, whose types the surface reads and writes, is
imported at the first request (about 1.5 s), and when it is not installed the answer says how to add it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from toolbridge._extras import findable

__all__ = ["router"]

router = APIRouter(prefix="/v1")

_MISSING = (
    "/v1/messages needs the anthropic SDK, whose types it speaks: pip install 'toolbridge[anthropic]' "
    "and restart toolbridge serve"
)


@router.post("/messages", response_model=None)
async def messages(request: Request) -> Response:
    if not findable("anthropic"):
        return _missing()
    from toolbridge.server.anthropic import messages as implementation

    return await implementation.messages(request)


@router.post("/messages/count_tokens", response_model=None)
async def count_tokens(request: Request) -> Response:
    if not findable("anthropic"):
        return _missing()
    from toolbridge.server.anthropic import messages as implementation

    return await implementation.count_tokens(request)


def _missing() -> JSONResponse:
    body = {"type": "error", "error": {"type": "api_error", "message": _MISSING}}
    return JSONResponse(body, status_code=501)
