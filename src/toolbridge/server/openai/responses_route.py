"""The route of `/v1/responses`. The `openai` SDK, whose types the surface writes, is imported at the first
request, and when it is not installed the answer says how to add it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from toolbridge._extras import findable
from toolbridge.server._errors import error_response

__all__ = ["router"]

router = APIRouter(prefix="/v1")


@router.post("/responses", response_model=None)
async def responses(request: Request) -> Response:
    if not findable("openai"):
        message = (
            "/v1/responses needs the openai SDK, whose types it speaks: pip install 'toolbridge[openai]'"
        )
        return error_response(501, message)
    from toolbridge.server.openai import responses as implementation

    return await implementation.responses(request)
