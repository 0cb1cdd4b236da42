"""Roots: the folders each server is told it may work in, and telling servers when they change.

```python
roots = Roots(["~/project"], per_server={"notes": ["~/notes"]})
async with ServerPool(configs, features=ClientFeatures(roots=roots)) as pool:
    ...
    changed = roots.set(["~/other"])          # every server without roots of its own
    await pool.notify_roots_changed(changed)  # they get `notifications/roots/list_changed`
```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import mcp_types as mcp

from toolbridge.errors import UsageError

__all__ = ["Roots", "root_of"]


def root_of(folder: str) -> mcp.Root:
    """A path (`~` expanded, relative to the current folder) or a file:// URI as an MCP root."""
    if folder.startswith("file://"):
        return mcp.Root(uri=folder, name=Path(folder.removeprefix("file://")).name or folder)
    if "://" in folder:
        raise UsageError(f"root {folder!r}: roots are folders, given as a path or a file:// URI")
    path = Path(folder).expanduser().resolve()
    return mcp.Root(uri=path.as_uri(), name=path.name or str(path))


class Roots:
    """The roots each server sees: its own (from its config), else the shared ones. Use it as
    `ClientFeatures(roots=...)`; it is called with the server's name when that server asks."""

    def __init__(self, shared: Iterable[str] = (), *, per_server: Mapping[str, Sequence[str]] | None = None):
        self._shared = [root_of(folder) for folder in shared]
        self._per_server = {
            name: [root_of(f) for f in folders] for name, folders in (per_server or {}).items()
        }

    def __call__(self, server: str) -> list[mcp.Root]:
        return list(self._per_server.get(server, self._shared))

    def set(self, folders: Iterable[str], *, server: str | None = None) -> list[str] | None:
        """Replace the roots of `server` (None: the shared ones). Returns who sees a change: [server],
        None for every server without roots of its own, [] when nothing changed."""
        roots = [root_of(folder) for folder in folders]
        if server is not None:
            if self._per_server.get(server) == roots:
                return []
            self._per_server[server] = roots
            return [server]
        if roots == self._shared:
            return []
        self._shared = roots
        return None

    def sees_shared(self, server: str) -> bool:
        """Whether `server` sees the shared roots (it has none of its own)."""
        return server not in self._per_server
