"""The server's settings: the config's `server` section (`toolbridge.config.ServeConfig`, where its keys
are described), overridden by `$TOOLBRIDGE_TOKEN` and command-line options.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError, field_validator

from toolbridge._request_guard import accepted_hosts, is_loopback
from toolbridge._token import TOKEN_ENV_VAR, token_from_env, token_problem, weak_token_problem
from toolbridge.config import Config, ServeConfig
from toolbridge.config.sections import DEFAULT_HOST, DEFAULT_PORT
from toolbridge.errors import ConfigError

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "TOKEN_ENV_VAR",
    "ServerSettings",
    "is_loopback",
    "settings_from_config",
]


class ServerSettings(ServeConfig):
    """The config's `server` section with the command line's overrides, and what follows from them."""

    @field_validator("token")
    @classmethod
    def _token_is_not_blank(cls, token: str | None) -> str | None:
        if token is not None and (
            problem := token_problem(token, sources=f"--token, ${TOKEN_ENV_VAR} or server.token")
        ):
            raise ValueError(problem)
        return token

    def accepted_hosts(self) -> set[str]:
        """`Host` header values accepted: loopback names, the bound address and `allowed_hosts`, with the port."""
        return accepted_hosts(self.host, self.port, self.allowed_hosts)

    def check_bind(self, *, has_users: bool = False) -> None:
        """Refuse to listen beyond this machine without a token or users (whose keys are then required),
        or with a token easy to guess: anyone who can reach it could use the tools."""
        if is_loopback(self.host):
            return
        if self.token and (problem := weak_token_problem(self.token, host=self.host)):
            raise ConfigError(problem)
        if not self.token and not has_users:
            raise ConfigError(
                f"refusing to listen on {self.host} without a token: anyone who can reach this address "
                f"could run your tools. Pass --token (or set ${TOKEN_ENV_VAR}), add users with keys "
                "(`toolbridge users add`), or bind to 127.0.0.1."
            )


def settings_from_config(config: Config, **overrides: Any) -> ServerSettings:
    """The config's `server` section, then `$TOOLBRIDGE_TOKEN`, then `overrides` (None values ignored)."""
    config.check_resolved("server", used_by="toolbridge serve")
    where = str(config.path) if config.path else None
    values: dict[str, Any] = config.server.model_dump(exclude_unset=True)
    if (from_env := token_from_env()) is not None:
        values["token"] = from_env
    values.update({key: value for key, value in overrides.items() if value is not None})
    try:
        return ServerSettings.model_validate(values)
    except ValidationError as error:
        problem = error.errors()[0]
        key = ".".join(str(part) for part in problem["loc"])
        # A validator's own message without pydantic's "Value error, " in front.
        message = str(problem["ctx"]["error"]) if problem["type"] == "value_error" else problem["msg"]
        raise ConfigError(message, path=where, key=f"server.{key}") from error
