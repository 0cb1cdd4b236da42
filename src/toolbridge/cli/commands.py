"""The application with every command registered, for programs and tests that drive it in-process
(`CliRunner().invoke(app, [...])`); the `toolbridge` command loads only the one it runs (`app.load_for`)."""

from toolbridge.cli.app import app, load_all

__all__ = ["app"]

load_all()
