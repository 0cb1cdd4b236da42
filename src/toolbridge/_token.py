"""The one token given outside the config (`--token` or `$TOOLBRIDGE_TOKEN`), as the server and the
gateway both take it."""

from __future__ import annotations

import os

__all__ = ["MIN_TOKEN_LENGTH", "TOKEN_ENV_VAR", "token_from_env", "token_problem", "weak_token_problem"]

TOKEN_ENV_VAR = "TOOLBRIDGE_TOKEN"
MIN_TOKEN_LENGTH = 16
"""Beyond this machine a token must have this many characters (and some variety): anyone who can reach
the address may try to guess it."""
_MIN_DISTINCT = 6


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


def weak_token_problem(token: str, *, host: str, which: str = "the token") -> str | None:
    """Why `token` (`which` names it in the message) is too easy to guess for a service listening on
    `host`, which is not this machine only; None when it will do."""
    if len(token) >= MIN_TOKEN_LENGTH and len(set(token)) >= _MIN_DISTINCT:
        return None
    weakness = (
        f"has {len(token)} characters"
        if len(token) < MIN_TOKEN_LENGTH
        else f"uses only {len(set(token))} different characters"
    )
    return (
        f"refusing to listen on {host}: {which} {weakness}, and beyond this machine a token needs at "
        f"least {MIN_TOKEN_LENGTH} characters, not all alike, or anyone who can reach the address may "
        "guess it. Make one with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`, or bind "
        "to 127.0.0.1."
    )
