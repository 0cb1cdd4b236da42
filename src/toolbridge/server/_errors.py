"""Every error the server answers with, in OpenAI's format, so one client-side reader handles them all:

{"error": {"message": "...", "type": "invalid_request_error", "param": "messages", "code": null}}
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from toolbridge._exception_groups import leaf_errors
from toolbridge.errors import ModelError, ModelErrorKind, StoreError

__all__ = [
    "ApiError",
    "describe_failure",
    "error_body",
    "error_response",
    "install_error_handlers",
    "model_failure",
    "read_body",
    "read_json",
]

BodyT = TypeVar("BodyT", bound=BaseModel)
_log = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    502: "api_error",
    503: "api_error",
    504: "api_error",
}


class ApiError(Exception):
    """An answer other than success; raised anywhere in a handler, sent as an OpenAI-format error."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers = headers or {}


def error_body(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    message, param = _encodable(message), _encodable(param) if param is not None else None
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


_ANTHROPIC_TYPES = {413: "request_too_large", 503: "overloaded_error"}


def anthropic_error_body(status: int, message: str) -> dict[str, Any]:
    """An error in Anthropic's shape, for `/v1/messages`."""
    kind = _ANTHROPIC_TYPES.get(status) or _TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    if kind in ("server_error", "conflict_error"):
        kind = "api_error" if status >= 500 else "invalid_request_error"
    return {"type": "error", "error": {"type": kind, "message": _encodable(message)}}


def error_response_for(
    path: str, status: int, message: str, *, code: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    """`error_response`, in the shape of the API `path` belongs to: Anthropic's for `/v1/messages`."""
    if not path.startswith("/v1/messages"):
        return error_response(status, message, code=code, headers=headers)
    headers = {**({"WWW-Authenticate": "Bearer"} if status == 401 else {}), **(headers or {})}
    return JSONResponse(anthropic_error_body(status, message), status_code=status, headers=headers)


def _encodable(text: str) -> str:
    # A message may quote the request (a key path, a value); what it quotes may hold lone surrogates,
    # which UTF-8 cannot encode, and the error itself must never fail to be sent.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_response(
    status: int,
    message: str,
    *,
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    headers = {**({"WWW-Authenticate": "Bearer"} if status == 401 else {}), **(headers or {})}
    return JSONResponse(
        error_body(status, message, param=param, code=code), status_code=status, headers=headers
    )


# How each kind of upstream failure is answered: the upstream's own status where the client can act on
# it (a request refused, too long, a key or access refused, a rate limit), else a gateway error.
_UPSTREAM_ANSWERS: dict[ModelErrorKind, tuple[int, str]] = {
    "context_length_exceeded": (400, "context_length_exceeded"),
    "invalid_request": (400, "invalid_request"),
    "invalid_api_key": (401, "invalid_api_key"),
    "permission_denied": (403, "permission_denied"),
    "rate_limit_exceeded": (429, "rate_limit_exceeded"),
    "unreachable": (502, "upstream_unreachable"),
    "timeout": (504, "upstream_timeout"),
}
# Passed on as the upstream's code where it says more than ours (`insufficient_quota` is not a 429 to
# retry). A number (vLLM and llama-server repeat the status there), or an error type in its place
# (`rate_limit_error`, what `ModelError.code` falls back to), says nothing more.
_OWN_CODE_KINDS = frozenset(
    {"invalid_request", "invalid_api_key", "permission_denied", "rate_limit_exceeded"}
)


def model_failure(error: ModelError | None, detail: str) -> ApiError:
    """The answer to a request whose model failed, in OpenAI's error shape (see docs/http-api.md): a context-length
    error is a 400 `context_length_exceeded`; a refused request, key or access and a rate limit keep the
    upstream's status (429 with its Retry-After); no connection is a 502, no answer in time a 504, and
    anything else a 502 whose message names the upstream and what it said."""
    kind = error.kind if error is not None else None
    answer = _UPSTREAM_ANSWERS.get(kind) if kind is not None else None
    status, code = answer or (502, "upstream_error")
    if kind in _OWN_CODE_KINDS and error is not None and error.code and _says_more(error.code):
        code = error.code
    headers: dict[str, str] = {}
    if status == 429 and error is not None and error.retry_after is not None:
        headers["Retry-After"] = str(math.ceil(error.retry_after))
        headers["retry-after-ms"] = str(round(error.retry_after * 1000))
    param = "messages" if kind == "context_length_exceeded" else None
    return ApiError(status, f"the model failed upstream: {detail}", param=param, code=code, headers=headers)


def _says_more(code: str) -> bool:
    return not code.isdigit() and not code.lower().endswith("error")


def api_error_response(error: ApiError) -> JSONResponse:
    """`error` answered in OpenAI's error shape with its status and headers."""
    return error_response(
        error.status, error.message, param=error.param, code=error.code, headers=error.headers
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return api_error_response(error)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        return _validation_response(error)

    @app.exception_handler(StoreError)
    async def store_failed(request: Request, error: StoreError) -> JSONResponse:
        # The database's own state (damaged, unreachable), not a bug here: one line, no traceback.
        _log.warning("%s %s: %s", request.method, request.url.path, error)
        return error_response(503, f"the database failed: {error}", code="store_error")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        # Starlette still logs the traceback; the client gets the same error shape as always.
        return error_response(500, f"the server failed: {describe_failure(error)}; see the server's log")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        message = str(error.detail)
        if error.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path}"
        elif error.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return error_response(error.status_code, message)


def describe_failure(error: BaseException) -> str:
    """The innermost error of a task group's exception group, as one line: the one worth reading."""
    error = leaf_errors(error)[0]
    return f"{type(error).__name__}: {error}"


async def read_body(request: Request, model: type[BodyT]) -> BodyT:
    """The JSON body as `model`, whatever the Content-Type says; a 400 naming the field otherwise.

    Read here rather than by FastAPI so a body sent without `Content-Type: application/json` (curl -d)
    is still read as JSON, and malformed JSON gets a message about JSON."""
    data = read_json(await request.body())
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise _invalid(error.errors()[0]) from None


def read_json(raw: bytes) -> Any:
    """A request body as JSON; a 400 for malformed JSON, nesting beyond MAX_JSON_DEPTH or lone surrogates."""
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ApiError(
            400, f"the request body is not valid JSON ({error}); send a JSON object", code="invalid_json"
        ) from None
    except RecursionError:  # the parser's own guard against deep nesting
        raise _too_deep() from None
    _check_json_values(data)
    return data


# Deeper than any real request; deep values cost recursion in every layer that walks them later.
MAX_JSON_DEPTH = 64


def _check_json_values(data: Any) -> None:
    """Refuse what JSON can carry but nothing after it can: nesting beyond MAX_JSON_DEPTH, and lone
    surrogates (`"\\ud800"`), which UTF-8 cannot encode, so no database, log or reply could hold them."""
    pending: list[tuple[Any, str, int]] = [(data, "", 0)]
    while pending:
        value, where, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise _too_deep()
        if isinstance(value, str):
            _check_text(value, where)
        elif isinstance(value, dict):
            for key, item in value.items():
                inner = f"{where}.{key}" if where else str(key)
                _check_text(key, inner)
                pending.append((item, inner, depth + 1))
        elif isinstance(value, list):
            pending.extend((item, f"{where}.{index}", depth + 1) for index, item in enumerate(value))


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ApiError(
            400,
            f"{where or 'the body'}: contains a lone surrogate ({text[error.start]!r}), which is not text; "
            "send valid Unicode (a \\ud83d escape needs its \\ude00 pair)",
            param=where or None,
            code="invalid_unicode",
        ) from None


def _too_deep() -> ApiError:
    return ApiError(
        400,
        f"the request body is nested more than {MAX_JSON_DEPTH} levels deep; send a flatter JSON value",
        code="invalid_json",
    )


def _validation_response(error: RequestValidationError) -> JSONResponse:
    invalid = _invalid(error.errors()[0])
    return error_response(invalid.status, invalid.message, param=invalid.param, code=invalid.code)


def _invalid(problem: Any) -> ApiError:
    location = [str(part) for part in problem["loc"] if part != "body"]
    param = ".".join(location) or None
    if problem["type"] == "missing":
        message = f"missing required field {param!r}" if param else "the request body is missing"
    elif problem["type"] == "model_attributes_type" and not param:
        message = "the request body must be a JSON object"
    else:
        message = f"{param}: {problem['msg']}" if param else problem["msg"]
    return ApiError(400, message, param=param, code=problem["type"])
