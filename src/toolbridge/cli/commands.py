"""Imports every command module so that each registers its commands on the app."""

from toolbridge.cli import call, parse, servers, tools

__all__ = ["call", "parse", "servers", "tools"]
