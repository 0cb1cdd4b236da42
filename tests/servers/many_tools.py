"""A server with 300 tools, as a user's few servers together have: 29 kinds of records, each with ten
actions (list, get, create, update, delete, search, export, import, archive, share), and ten tools of
their own (a weather forecast, a currency conversion, ...). Every tool answers with its own name, so a
test sees which one was called.

Run: python tests/servers/many_tools.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
from _cli import run
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool

RECORDS = [
    ("calendar", "event", "in the calendar"),
    ("mail", "message", "in the mailbox"),
    ("contacts", "contact", "in the address book"),
    ("tasks", "task", "on the to-do list"),
    ("notes", "note", "in the notebook"),
    ("files", "file", "in cloud storage"),
    ("photos", "photo", "in the photo library"),
    ("invoices", "invoice", "in accounting"),
    ("orders", "order", "in the shop"),
    ("products", "product", "in the product catalog"),
    ("customers", "customer", "in the CRM"),
    ("tickets", "support ticket", "in the help desk"),
    ("issues", "issue", "in the bug tracker"),
    ("repos", "repository", "on the code host"),
    ("pulls", "pull request", "on the code host"),
    ("builds", "CI build", "in continuous integration"),
    ("deploys", "deployment", "in the hosting platform"),
    ("dns", "DNS record", "of the domain"),
    ("users", "user account", "in the directory"),
    ("groups", "group", "in the directory"),
    ("docs", "document", "in the wiki"),
    ("sheets", "spreadsheet", "in the office suite"),
    ("slides", "presentation", "in the office suite"),
    ("chats", "chat channel", "in team chat"),
    ("meetings", "video meeting", "in the conferencing service"),
    ("expenses", "expense report", "in the expense tool"),
    ("leads", "sales lead", "in the sales pipeline"),
    ("campaigns", "email campaign", "in the newsletter tool"),
    ("backups", "backup", "of the servers"),
]
ACTIONS: list[tuple[str, str, dict[str, dict[str, Any]]]] = [
    ("list", "List the {nouns} {where}, newest first.", {"limit": {"type": "integer"}}),
    ("get", "Get one {noun} {where} by its id.", {"id": {"type": "string"}}),
    ("create", "Create a new {noun} {where}.", {"name": {"type": "string"}, "details": {"type": "string"}}),
    ("update", "Change the details of a {noun} {where}.", {"id": {"type": "string"}, "details": {"type": "string"}}),
    ("delete", "Delete a {noun} {where} for good.", {"id": {"type": "string"}}),
    ("search", "Find {nouns} {where} by words they contain.", {"query": {"type": "string"}}),
    ("export", "Export the {nouns} {where} to a CSV file.", {"path": {"type": "string"}}),
    ("import", "Import {nouns} {where} from a CSV file.", {"path": {"type": "string"}}),
    ("archive", "Archive a {noun} {where} that is no longer needed.", {"id": {"type": "string"}}),
    ("share", "Share a {noun} {where} with a person, by their email address.",
     {"id": {"type": "string"}, "email": {"type": "string"}}),
]  # fmt: skip
OWN_TOOLS: list[tuple[str, str, dict[str, dict[str, Any]]]] = [
    ("weather_forecast", "The weather forecast for a city: temperature, rain and wind for the next days.",
     {"city": {"type": "string"}, "days": {"type": "integer"}}),
    ("currency_convert", "Convert an amount of money from one currency to another at today's rate.",
     {"amount": {"type": "number"}, "from_currency": {"type": "string"}, "to_currency": {"type": "string"}}),
    ("time_in_zone", "The current date and time in a time zone (an IANA name such as Europe/Paris).",
     {"timezone": {"type": "string"}}),
    ("translate_text", "Translate a text into another language.",
     {"text": {"type": "string"}, "target_language": {"type": "string"}}),
    ("geocode_address", "The latitude and longitude of a street address.", {"address": {"type": "string"}}),
    ("stock_quote", "The latest price of a share on the stock exchange, by its ticker symbol.",
     {"symbol": {"type": "string"}}),
    ("shorten_url", "Make a short link for a long URL.", {"url": {"type": "string"}}),
    ("qr_code", "Make a QR code image for a text or link.", {"text": {"type": "string"}}),
    ("unit_convert", "Convert a quantity between units (km to miles, kg to pounds, celsius to fahrenheit).",
     {"value": {"type": "number"}, "from_unit": {"type": "string"}, "to_unit": {"type": "string"}}),
    ("send_sms", "Send a text message (SMS) to a phone number.",
     {"phone": {"type": "string"}, "text": {"type": "string"}}),
]  # fmt: skip


def _tool(name: str, description: str, properties: dict[str, dict[str, Any]]) -> Tool:
    schema = {"type": "object", "properties": properties, "required": list(properties)[:1]}
    tool = Tool.from_function(lambda: name, name=name, description=description)
    return tool.model_copy(update={"parameters": schema})


TOOLS = [
    _tool(f"{prefix}_{action}", description.format(noun=noun, nouns=noun + "s", where=where), properties)
    for prefix, noun, where in RECORDS
    for action, description, properties in ACTIONS
] + [_tool(name, description, properties) for name, description, properties in OWN_TOOLS]
server = MCPServer("many-tools", tools=TOOLS, log_level="WARNING")

if __name__ == "__main__":
    run(server)
