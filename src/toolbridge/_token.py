"""The one token given outside the config (`--token` or `$TOOLBRIDGE_TOKEN`), as the server and the
gateway both take it."""

from __future__ import annotations

import os

__all__ = ["TOKEN_ENV_VAR", "token_from_env", "token_problem"]

TOKEN_ENV_VAR = "TOOLBRIDGE_TOKEN"


def token_from_env() -> str | None:
    """`$TOOLBRIDGE_TOKEN`; set but empty counts as not set, as shells and env files mean it."""
    return os.environ.get(TOKEN_ENV_VAR) or None


def token_problem(token: str, *, sources: str) -> str | None:
    """Why `token` cannot be used, naming where it may come from (`sources`); None when it can.

    A blank token would "require" a header anyone can send; refusing it beats treating it as none,
    since whoever set it meant to protect the service."""
    if not token.strip():
        return f"the token is blank; give a real token ({sources}), or none at all to serve this machine only"
    if token != token.strip():
        return "the token starts or ends with whitespace, which no client sends; remove it"
    return None
