"""Many tools: what tool search saves, and how well it finds.

Run: .venv/bin/python bench/scale.py

1. The first request's tool definitions with 50, 300 and 1,000 tools, the whole catalog against tool
   search (`search_tools` and nothing else), in estimated tokens and as a ratio.
2. Recall at 5 of `search_tools` on realistic requests against the tools of real MCP servers started
   here (excel-mcp-server, mcp-server-time, the everything server, tests/servers/many_tools.py) plus the
   native tools: the share of requests whose right tool is among the first five found (goal: 90%).

Code mode's chain of ten calls is not measured yet (code mode is not built).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from toolbridge.config.model import Config, ServerConfig
from toolbridge.tools import Toolbox
from toolbridge.tools.search import ToolIndex, ToolSearch, estimated_tokens
from toolbridge.types import ToolSpec

REPO = Path(__file__).resolve().parent.parent
SERVERS = REPO / ".servers"
RECALL_GOAL = 0.9

QUERIES: list[tuple[str, set[str]]] = [
    # excel-mcp-server
    ("read the values in cells A1 to C10 of a spreadsheet", {"read_range"}),
    ("write these numbers into cells of the excel sheet", {"write_range"}),
    ("make a bar chart of the sales column", {"create_chart"}),
    ("sort the rows by date", {"sort_range"}),
    ("summarize the data in a pivot table", {"create_pivot_table"}),
    ("add a new worksheet to the workbook", {"create_sheet"}),
    ("which cells contain the word total", {"find_cells"}),
    ("save the sheet as a csv file", {"export_csv"}),
    ("merge the header cells", {"merge_cells"}),
    ("make the first row bold with a yellow fill", {"format_range"}),
    ("freeze the top row and set column widths", {"set_sheet_layout"}),
    ("add a dropdown list of allowed values to a column", {"add_data_validation"}),
    ("rename the sheet to Budget", {"rename_sheet"}),
    ("highlight cells above 100 with a conditional format", {"add_conditional_format"}),
    # mcp-server-time and the native tools
    ("what time is it in Tokyo right now", {"time__get_current_time", "native__get_current_time", "time_in_zone"}),
    ("convert 3pm New York time to Berlin time", {"convert_time"}),
    ("calculate 17 * 23 + 4", {"calculate"}),
    # the everything server
    ("add two numbers and return their sum", {"get-sum", "calculate"}),
    ("compress a file with gzip", {"gzip-file-as-resource"}),
    ("show the environment variables of the server", {"get-env"}),
    ("echo my message back", {"echo"}),
    # tests/servers/many_tools.py
    ("weather forecast for Paris this weekend", {"weather_forecast"}),
    ("how many dollars are 50 euros", {"currency_convert"}),
    ("put a meeting in my calendar for tomorrow", {"calendar_create", "meetings_create"}),
    ("delete a user account from the directory", {"users_delete"}),
    ("translate this paragraph into German", {"translate_text"}),
    ("send a text message reminder to my phone", {"send_sms"}),
    ("latest share price of AAPL", {"stock_quote"}),
    ("share the quarterly presentation with a colleague", {"slides_share"}),
    ("list the newest support tickets in the help desk", {"tickets_list"}),
    ("import contacts from a csv file", {"contacts_import"}),
    ("find pull requests that mention login", {"pulls_search"}),
    ("how many miles are 10 km", {"unit_convert"}),
    ("latitude and longitude of a street address", {"geocode_address"}),
    ("export all invoices to a csv file", {"invoices_export"}),
]  # fmt: skip


def servers() -> dict[str, ServerConfig]:
    python = sys.executable
    many = str(REPO / "tests" / "servers" / "many_tools.py")
    entries = {
        "excel": (str(SERVERS / "excel-mcp-server/bin/excel-mcp-server"), ["stdio"]),
        "time": (str(SERVERS / "mcp-server-time/bin/mcp-server-time"), ["--local-timezone", "UTC"]),
        "everything": (str(SERVERS / "npm/node_modules/.bin/mcp-server-everything"), ["stdio"]),
        "many": (python, [many]),
    }
    return {
        name: ServerConfig(name=name, transport="stdio", command=command, args=args)
        for name, (command, args) in entries.items()
    }


def catalog_of(size: int, tools: list[ToolSpec]) -> list[ToolSpec]:
    """`size` tools: the listed ones, repeated under numbered names where more are wanted."""
    made = list(tools[:size])
    copy = 1
    while len(made) < size:
        made += [
            tool.model_copy(update={"name": f"{tool.name}_{copy}"}) for tool in tools[: size - len(made)]
        ]
        copy += 1
    return made


def first_request_sizes(tools: list[ToolSpec]) -> None:
    print("first request's tool definitions (estimated tokens)")
    print(f"{'tools':>6} {'whole catalog':>14} {'tool search':>12} {'ratio':>8}")
    for size in (50, 300, 1000):
        catalog = catalog_of(size, tools)
        whole = estimated_tokens(catalog)
        searched = estimated_tokens(ToolSearch(catalog).offered())
        print(f"{size:>6} {whole:>14,} {searched:>12,} {searched / whole:>8.3f}")


def recall_at_5(tools: list[ToolSpec]) -> float:
    index = ToolIndex(tools)
    names = {tool.name for tool in tools}
    missing = {name for _, wanted in QUERIES for name in wanted} - names
    if missing:
        raise SystemExit(
            f"the catalog lacks the expected tools {sorted(missing)}: is every server installed?"
        )
    hits = 0
    for query, wanted in QUERIES:
        found = [tool.name for tool in index.search(query, 5)]
        hit = bool(wanted & set(found))
        hits += hit
        if not hit:
            print(f"  missed: {query!r} -> {found} (wanted {sorted(wanted)})")
    recall = hits / len(QUERIES)
    verdict = "met" if recall >= RECALL_GOAL else "NOT met"
    print(
        f"recall at 5: {recall:.1%} of {len(QUERIES)} requests over {len(tools)} tools (goal 90%: {verdict})"
    )
    return recall


async def main() -> None:
    async with Toolbox(Config(servers=servers())) as box:
        tools = await box.list_tools()
    first_request_sizes(tools)
    recall_at_5(tools)


if __name__ == "__main__":
    anyio.run(main)
