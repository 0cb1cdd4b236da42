"""The `toolbridge` command: a thin skin over the Python API, one module per noun."""

from toolbridge.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()
