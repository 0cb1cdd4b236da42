"""Where sign-ins are kept: per server and URL (and configured issuer), its tokens and its client
registration.

`TokenStore` is the seam (an application can keep them in its own vault); `FileTokenStore` is the
default, one JSON file readable by its owner only (mode 0600, in a 0700 folder).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Protocol

import anyio
import platformdirs
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import BaseModel, ConfigDict, ValidationError

from toolbridge._private_file import write_private_file

__all__ = ["FileTokenStore", "StoredLogin", "TokenStore", "default_token_file"]

TOKEN_FILE_ENV = "TOOLBRIDGE_TOKENS"

logger = logging.getLogger(__name__)


class StoredLogin(BaseModel):
    """One server's sign-in: bound to the URL it was made for, so a changed URL never gets old tokens."""

    model_config = ConfigDict(frozen=True)

    url: str
    issuer: str | None = None
    """The authorization server the config named (`auth.issuer`) when it was made; None: found by discovery."""
    tokens: OAuthToken | None = None
    expires_at: float | None = None
    """When the access token expires (seconds since the epoch), if the server said."""
    client: OAuthClientInformationFull | None = None
    """The client registration made for this server (dynamic registration or a metadata document)."""

    @property
    def scope(self) -> str | None:
        return self.tokens.scope if self.tokens is not None else None


class TokenStore(Protocol):
    """Keeps each server's `StoredLogin`, by a key naming the server, its URL and issuer (`login_key`)."""

    async def load(self, server: str) -> StoredLogin | None: ...

    async def save(self, server: str, login: StoredLogin) -> None: ...

    async def delete(self, server: str) -> bool:
        """Forget the server's sign-in; False if there was none."""
        ...

    async def load_all(self) -> dict[str, StoredLogin]: ...


def default_token_file() -> Path:
    """`$TOOLBRIDGE_TOKENS`, else `oauth-tokens.json` in the user data folder (beside the database)."""
    override = os.environ.get(TOKEN_FILE_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("toolbridge")) / "oauth-tokens.json"


class FileTokenStore:
    """Sign-ins in one JSON file that only its owner can read or write."""

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._lock = anyio.Lock()

    @property
    def path(self) -> Path:
        return self._path if self._path is not None else default_token_file()

    async def load(self, server: str) -> StoredLogin | None:
        return self._read().get(server)

    async def load_all(self) -> dict[str, StoredLogin]:
        return self._read()

    async def save(self, server: str, login: StoredLogin) -> None:
        async with self._lock:
            logins = self._read()
            logins[server] = login
            self._write(logins)

    async def delete(self, server: str) -> bool:
        async with self._lock:
            logins = self._read()
            if logins.pop(server, None) is None:
                return False
            self._write(logins)
            return True

    def _read(self) -> dict[str, StoredLogin]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # A damaged file is a lost sign-in, not a crash: the next use signs in again.
            logger.warning("the OAuth token file %s cannot be read (%s); servers will ask to sign in again",
                           self.path, type(exc).__name__)  # fmt: skip
            return {}
        logins: dict[str, StoredLogin] = {}
        for server, entry in raw.items() if isinstance(raw, dict) else ():
            try:
                logins[server] = StoredLogin.model_validate(entry)
            except ValidationError:
                continue
        return logins

    def _write(self, logins: dict[str, StoredLogin]) -> None:
        data = {server: login.model_dump(mode="json", exclude_none=True) for server, login in logins.items()}
        write_private_file(self.path, json.dumps(data, indent=1))
