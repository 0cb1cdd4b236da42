"""A server's reply the SDK cannot parse, answered at once as an error instead of waited on until timeout.

The SDK hands over a line it cannot parse as an exception on the read stream, and the request it
answered stays pending until its timeout (60 s by default): a schema nested 200 levels deep, a lone
surrogate (`"\\ud800"`) in a result, or a `"result"` that is not an object all end that way. When the
bad line still says which request it answers (its `"id"`), it is replaced here by a JSON-RPC error
for that request, so the caller learns at once that the server sent an invalid reply. Over streamable
HTTP the SDK makes such an error itself ("Failed to parse JSON response: ..."); it is reworded the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as mcp
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["INVALID_REPLY", "invalid_reply_error", "invalid_reply_message", "relabelled_sdk_parse_error"]

INVALID_REPLY = "toolbridge: invalid reply"
"""The `data` of the errors made here, telling them apart from a server's own errors."""

# When even Python's parser gives up (nesting deeper than its recursion limit), the id can still be read
# from the start of the line, where servers put it after "jsonrpc".
_LEADING_ID = re.compile(r'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def invalid_reply_error(failure: Exception) -> SessionMessage | None:
    """The error reply standing in for a line the SDK could not parse, or None if it answers no request."""
    if not isinstance(failure, ValidationError) or not failure.errors():
        return None
    first = failure.errors()[0]
    raw = first.get("input")
    reply = _decoded(raw) if isinstance(raw, str) else raw
    request_id = _response_id(reply) if reply is not None else _leading_id(raw)
    if request_id is None:
        return None
    invalid_json = first["msg"].removeprefix("Invalid JSON: ") if first["type"] == "json_invalid" else None
    return _error_reply(request_id, invalid_json)


_SDK_PARSE_FAILURE = "Failed to parse JSON response: "
_SDK_INVALID_JSON = re.compile(r"Invalid JSON: (.*?) \[type=json_invalid")


def relabelled_sdk_parse_error(item: SessionMessage) -> SessionMessage | None:
    """The SDK's own error for an unparseable HTTP reply, reworded as an invalid reply; None for others."""
    message = item.message
    if not (
        isinstance(message, mcp.JSONRPCError)
        and message.error.code == mcp.PARSE_ERROR
        and message.error.message.startswith(_SDK_PARSE_FAILURE)
        and message.id is not None
    ):
        return None
    found = _SDK_INVALID_JSON.search(message.error.message)
    return _error_reply(message.id, found.group(1) if found else None)


def _error_reply(request_id: str | int, invalid_json: str | None) -> SessionMessage:
    """`invalid_json` is the parser's complaint when the reply is not JSON the SDK accepts."""
    if invalid_json is not None:
        reason = f"it is not valid JSON to the MCP SDK ({invalid_json})"
    else:
        reason = "it is not a JSON-RPC response (no valid 'result' object or 'error')"
    # The reason travels alone: whoever made the request words the message (`invalid_reply_message`).
    error = mcp.ErrorData(code=mcp.PARSE_ERROR, message=reason, data=INVALID_REPLY)
    return SessionMessage(mcp.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def invalid_reply_message(server: str, reason: str, *, answering: str = "") -> str:
    """`answering` says to what, e.g. "to the call to 'search'"; `reason` is what was wrong with it."""
    return (
        f"Server {server!r} sent an invalid reply{' ' + answering if answering else ''}: {reason}. "
        "This is a bug in the server: report it to its authors, or avoid what causes it."
    )


def _decoded(line: str) -> Any:
    try:
        return json.loads(line)  # Python's parser accepts lone surrogates and deeper nesting
    except (ValueError, RecursionError):
        return None


def _response_id(reply: Any) -> str | int | None:
    """The id of a reply (not a request or notification), when it has a usable one."""
    if not isinstance(reply, dict) or "method" in reply or not ({"result", "error"} & reply.keys()):
        return None
    request_id = reply.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def _leading_id(raw: object) -> str | int | None:
    match = _LEADING_ID.match(raw) if isinstance(raw, str) else None
    if match is None:
        return None
    token = match.group(1)
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None
