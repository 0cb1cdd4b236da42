"""The `toolbridge` command: a thin skin over the Python API, one module per noun."""

import sys

from toolbridge.cli.app import app, load_for
from toolbridge.errors import MissingExtraError

__all__ = ["app", "main"]


def main() -> None:
    try:
        load_for(sys.argv[1:])  # only the command this line runs (all of them for --help)
        app()
    except MissingExtraError as error:  # one a command did not check for itself: no traceback either
        from rich.markup import escape

        from toolbridge.cli._common import stderr

        stderr.print(f"[bold red]error:[/] {escape(str(error))}", markup=True)
        sys.exit(1)
