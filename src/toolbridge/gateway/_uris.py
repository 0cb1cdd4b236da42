"""Resource URIs as the gateway shows them: unique across servers, and mapped back to the server's own.

A URI (or URI template) only one offered server has is shown as that server gives it. One that several
servers list is shown as `SERVER+URI` for each of them (`docs+file:///README.md`), the server's name
put before the URI's scheme, which keeps it a URI; the gateway strips the prefix again before it asks
`SERVER`. A template two servers both offer (the same URIs, whatever its variables are called) is
prefixed the same way, and so are the URIs made from it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolbridge.tools.resource_and_prompt_catalog import template_pattern

__all__ = ["SERVER_SEPARATOR", "UriTable"]

SERVER_SEPARATOR = "+"


@dataclass(frozen=True)
class _Template:
    server: str
    template: str
    shape: str
    """The regex of the URIs it makes: two templates with the same shape make the same URIs."""
    shared: bool


class UriTable:
    """Which offered server a URI belongs to, built from the servers' listings.

    `resources` and `templates` map each server (in config order) to the URIs and URI templates it lists.
    """

    def __init__(
        self,
        resources: Mapping[str, Sequence[str]] | None = None,
        templates: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        resources, templates = resources or {}, templates or {}
        self._servers = list(dict.fromkeys([*resources, *templates]))
        owners: dict[str, list[str]] = {}
        for server, uris in resources.items():
            for uri in dict.fromkeys(uris):
                owners.setdefault(uri, []).append(server)
        self._shared_uris = {uri for uri, servers in owners.items() if len(servers) > 1}
        self._owner = {uri: servers[0] for uri, servers in owners.items() if len(servers) == 1}
        by_shape: dict[str, set[str]] = {}
        for server, listed in templates.items():
            for template in listed:
                by_shape.setdefault(template_pattern(template).pattern, set()).add(server)
        self._templates = [
            _Template(server, template, shape, len(by_shape[shape]) > 1)
            for server, listed in templates.items()
            for template in listed
            for shape in [template_pattern(template).pattern]
        ]

    def resource(self, server: str, uri: str) -> str:
        """How the gateway shows `uri`, listed (or returned) by `server`."""
        if uri in self._shared_uris or (uri not in self._owner and self._made_from_shared(server, uri)):
            return f"{server}{SERVER_SEPARATOR}{uri}"
        return uri

    def template(self, server: str, uri_template: str) -> str:
        """How the gateway shows a URI template of `server`."""
        shape = template_pattern(uri_template).pattern
        shared = any(t.shared and t.shape == shape for t in self._templates)
        return f"{server}{SERVER_SEPARATOR}{uri_template}" if shared else uri_template

    def route(self, uri: str, servers: Sequence[str]) -> tuple[str, str] | None:
        """(server, the URI it knows) for a URI the gateway showed, or None when no offered server has it.

        A listed URI goes to the server that lists it; a URI made from a template to the server with the
        template; `SERVER+URI` to `SERVER`; anything else to the only server, when there is one.
        """
        if (owner := self._owner.get(uri)) is not None and owner in servers:
            return owner, uri
        for template in self._templates:
            if not template.shared and template.server in servers and _makes(template, uri):
                return template.server, uri
        server, separator, rest = uri.partition(SERVER_SEPARATOR)
        if separator and server in servers and rest:
            return server, rest
        if len(servers) == 1:
            return servers[0], uri
        return None

    def template_route(self, uri_template: str, servers: Sequence[str]) -> tuple[str, str] | None:
        """(server, its own template) for a template the gateway showed (completion refers to them)."""
        for template in self._templates:
            if (
                template.server in servers
                and self.template(template.server, template.template) == uri_template
            ):
                return template.server, template.template
        if len(servers) == 1:
            return servers[0], uri_template
        return None

    def _made_from_shared(self, server: str, uri: str) -> bool:
        return any(t.shared and t.server == server and _makes(t, uri) for t in self._templates)


def _makes(template: _Template, uri: str) -> bool:
    return re.fullmatch(template.shape, uri) is not None
