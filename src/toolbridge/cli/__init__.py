"""The `toolbridge` command: a thin skin over the Python API, one module per noun."""

import sys

from toolbridge.cli.app import app, load_for

__all__ = ["app", "main"]


def main() -> None:
    load_for(sys.argv[1:])  # only the command this line runs (all of them for --help)
    app()
