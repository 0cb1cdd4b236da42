"""The `toolbridge` command: a thin skin over the Python API, one module per noun."""

import sys

from toolbridge.cli.app import StdoutClosed, app, load_for
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
    except StdoutClosed:
        sys.exit(_CLOSED_PIPE)


_CLOSED_PIPE = 141
"""The exit code of a command whose reader went away, as a shell gives one killed by SIGPIPE (`yes | head -1`)."""
