"""Keeping the token out of log lines. The event stream takes `?token=` (EventSource cannot send
headers), so URLs in access logs may carry it, spelt in any encoding a client chooses."""

from __future__ import annotations

import logging
import re
from urllib.parse import quote, quote_plus, unquote_plus

__all__ = ["TokenRedactor", "install_token_redaction"]

REDACTED = "***"
# Loggers whose handlers print request lines or our own messages.
_LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "toolbridge")
_QUERY_PARAMETER = re.compile(r"(?P<key>[^?&=\s\"']+)(?P<sep>=|%3[dD])(?P<value>[^&\s\"']*)")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# A user's API key (`toolbridge.store.users`): its prefix may be shown, its secret never.
_API_KEY_SECRET = re.compile(r"(?P<prefix>tbk_[0-9a-f]{8}_)[A-Za-z0-9_-]+")


class TokenRedactor(logging.Filter):
    """Replaces the value of every parameter whose name decodes to `token` (`%74oken`, `TOKEN%3D...`),
    the token itself however it is percent-encoded, and the secret of any user's API key with `***`."""

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self.redact(message) == message:
            return True
        # Redacted where it is, argument by argument: uvicorn's access formatter reads the request line
        # from the arguments (a 5-tuple), and fails on a record that has none.
        if isinstance(record.args, tuple):
            record.msg = self._redacted(record.msg)
            record.args = tuple(self._redacted(arg) for arg in record.args)
            message = record.getMessage()
        if self.redact(message) != message:  # the secret spans arguments, or hides in another type
            record.msg, record.args = self.redact(message), None
        return True

    def _redacted(self, value: object) -> object:
        return self.redact(value) if isinstance(value, str) else value

    def redact(self, text: str) -> str:
        text = _QUERY_PARAMETER.sub(self._parameter, text)
        text = _API_KEY_SECRET.sub(rf"\g<prefix>{REDACTED}", text)
        if self.token:
            for spelling in _spellings(self.token):
                text = text.replace(spelling, REDACTED)
            text = self._decoded_token_runs(text)
        return text

    @staticmethod
    def _parameter(match: re.Match[str]) -> str:
        if _fully_decoded(match["key"]).lower() != "token":
            return match[0]
        return f"{match['key']}{match['sep']}{REDACTED}"

    def _decoded_token_runs(self, text: str) -> str:
        # The token spelt with some or all characters escaped (%73%33cret-...): any run of escapes and
        # plain characters that decodes to something containing it.
        assert self.token
        for match in re.finditer(r"(?:%[0-9A-Fa-f]{2}|[^\s&\"'?=/])+", text):
            if _PERCENT_ESCAPE.search(match[0]) and self.token in _fully_decoded(match[0]):
                text = text.replace(match[0], REDACTED)
        return text


def install_token_redaction(token: str | None) -> TokenRedactor:
    """Adds the redactor to every handler of the server's loggers (handler filters also see the records
    propagated from child loggers, which logger filters do not)."""
    redactor = TokenRedactor(token)
    for name in _LOGGERS:
        for handler in logging.getLogger(name).handlers:
            for stale in [f for f in handler.filters if isinstance(f, TokenRedactor)]:
                handler.removeFilter(stale)
            handler.addFilter(redactor)
    return redactor


def _spellings(token: str) -> set[str]:
    return {token, quote(token, safe=""), quote_plus(token, safe="")} - {""}


def _fully_decoded(text: str) -> str:
    # Decoding until nothing changes also undoes double encoding (%2574oken).
    for _ in range(5):
        decoded = unquote_plus(text)
        if decoded == text:
            break
        text = decoded
    return text
