"""How long toolbridge itself waits to retry: the SDKs honour a provider's Retry-After (openai up to two
minutes per retry, anthropic any wait), which would hold a caller (a client of `toolbridge serve`, say)
for minutes before it even learns of the rate limit. A wait asked for up to `RETRY_WAIT_LIMIT` seconds
is waited out (within `max_retries`); a longer one fails at once, and the `ModelError` carries the
Retry-After for the caller to honour (the server passes it on; the message says how long to wait).

The SDKs read the (non-standard, but both honour it) `x-should-retry` header before retrying; a response
hook on the HTTP client they send through sets it to "false" on such answers. That header is read by the
SDKs' private retry logic (`_should_retry`), so both SDKs are bounded below their next major version in
pyproject.toml and tests/test_dependency_contracts.py checks that they still honour it.
"""

from __future__ import annotations

import math
from typing import Any

import httpx2

from toolbridge._http_client import async_http_client

__all__ = ["RETRY_WAIT_HOOKS", "RETRY_WAIT_LIMIT", "own_http_client", "refuse_long_retry_waits"]

RETRY_WAIT_LIMIT = 10.0
"""Seconds: the longest Retry-After the SDK behind a model waits out before retrying by itself."""


async def refuse_long_retry_waits(response: httpx2.Response) -> None:
    wait = _requested_wait(response.headers)
    if wait is not None and wait > RETRY_WAIT_LIMIT:
        response.headers["x-should-retry"] = "false"


RETRY_WAIT_HOOKS: dict[str, list[Any]] = {"response": [refuse_long_retry_waits]}
"""`event_hooks` for the HTTP client a model's SDK client is built with."""


def own_http_client(timeout: httpx2.Timeout, limits: httpx2.Limits) -> httpx2.AsyncClient:
    """The HTTP client a model's SDK client gets when the user passed none: the SDK's own `timeout` and
    `limits`, over aiohttp (`toolbridge._http_client`), waiting out short Retry-Afters only."""
    return async_http_client(
        timeout=timeout, limits=limits, follow_redirects=True, event_hooks=RETRY_WAIT_HOOKS
    )


def _requested_wait(headers: httpx2.Headers) -> float | None:
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, "nan")) / scale
        except ValueError:
            continue  # an HTTP date: providers send seconds, and the SDKs read no date either
        if math.isfinite(value):
            return value
    return None
