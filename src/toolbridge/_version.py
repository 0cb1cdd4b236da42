"""toolbridge's version, read from the installed package's metadata (`version` in pyproject.toml is its
one source).

A leaf: what reports the version (the MCP client's `clientInfo`, the gateway's `serverInfo`, the
OpenAPI document, `toolbridge --version`) imports it from here, never from the package root, which
imports them in turn.
"""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("toolbridge")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
