"""A server's `auth` entry (OAuth): what it accepts, and mistakes named with their key and a way out."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.config import parse_config
from toolbridge.config.model import ServerConfig
from toolbridge.errors import ConfigError

URL = "https://mcp.example.com/mcp"


def server_with(auth: Any, **entry: Any) -> ServerConfig:
    config = parse_config({"mcpServers": {"remote": {"url": URL, "auth": auth, **entry}}})
    return config.servers["remote"]


def test_a_preregistered_client_and_its_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMOTE_SECRET", "s3cret")
    auth = server_with(
        {
            "client_id": "my-app",
            "client_secret": "${REMOTE_SECRET}",
            "scope": "read write",
            "redirect_uri": "http://127.0.0.1:8976/callback",
        }
    ).auth
    assert auth is not None
    assert (auth.client_id, auth.client_secret, auth.scope) == ("my-app", "s3cret", "read write")
    assert auth.grant == "authorization_code"
    assert auth.redirect_uri == "http://127.0.0.1:8976/callback"


def test_client_credentials_and_a_metadata_document() -> None:
    robot = server_with({"grant": "client_credentials", "client_id": "bot", "client_secret": "x"}).auth
    assert robot is not None
    assert robot.grant == "client_credentials"
    cimd = server_with({"client_metadata_url": "https://app.example.com/client.json"}).auth
    assert cimd is not None
    assert cimd.client_metadata_url == "https://app.example.com/client.json"
    assert server_with({}).auth is not None  # all optional: discovery fills in the rest
    assert parse_config({"mcpServers": {"r": {"url": URL}}}).servers["r"].auth is None


@pytest.mark.parametrize(
    ("auth", "key", "says"),
    [
        ({"client_secert": "x"}, "auth.client_secert", "did you mean 'client_secret'?"),
        (
            {"grant": "password"},
            "auth.grant",
            "expected one of 'authorization_code', 'client_credentials', 'identity_assertion'",
        ),
        (
            {"grant": "client_credentials", "client_id": "bot"},
            "auth.grant",
            "needs 'client_id' and 'client_secret'",
        ),
        ({"client_secret": "x"}, "auth.client_secret", "without 'client_id'"),
        ({"redirect_uri": "https://example.com/cb"}, "auth.redirect_uri", "loopback address"),
        ({"client_metadata_url": "http://app/c.json"}, "auth.client_metadata_url", "https:// URL"),
        ({"scope": 3}, "auth.scope", "expected a non-empty string"),
        ({"token_endpoint_auth_method": "jwt"}, "auth.token_endpoint_auth_method", "client_secret_basic"),
        (
            {
                "grant": "client_credentials",
                "client_id": "bot",
                "token_endpoint_auth_method": "private_key_jwt",
            },
            "auth.private_key",
            "needs the key that signs",
        ),
        ({"client_id": "bot", "private_key": "PEM"}, "auth.grant", '"grant": "client_credentials"'),
        (
            {"grant": "client_credentials", "client_id": "b", "private_key": "P", "private_key_file": "f"},
            "auth.private_key",
            "not both",
        ),
        (
            {"grant": "identity_assertion", "client_id": "app", "client_secret": "s"},
            "auth.grant",
            "needs issuer, idp_token_endpoint, idp_client_id, idp_id_token",
        ),
        ({"idp_id_token": "t"}, "auth.idp_id_token", '"grant": "identity_assertion"'),
        ("token", "auth", "expected an object"),
    ],
)
def test_mistakes_name_the_key(auth: Any, key: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        server_with(auth)
    assert caught.value.key == key
    assert says in str(caught.value)


def test_auth_is_for_http_servers() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"mcpServers": {"local": {"command": "srv", "auth": {}}}})
    assert "for servers reached over HTTP" in str(caught.value)
