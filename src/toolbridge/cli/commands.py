"""Imports every command module so that each registers its commands on the app."""

from toolbridge.cli import ask, call, chat, parse, servers, tools

__all__ = ["ask", "call", "chat", "parse", "servers", "tools"]
