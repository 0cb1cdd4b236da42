"""Many tools: what tool search saves, and how well it finds.

Run: .venv/bin/python bench/scale.py

1. The first request's tool definitions with 50, 300 and 1,000 tools, the whole catalog against tool
   search (`search_tools` and nothing else), in estimated tokens and as a ratio.
2. Recall at 5 of `search_tools` on realistic requests against the tools of real MCP servers started
   here (excel-mcp-server, mcp-server-time, the everything server, tests/servers/many_tools.py) plus the
   native tools: the share of requests whose right tool is among the first five found (goal: 90%).
3. A chain of ten dependent calls (`add` ten times, each on the last sum), played by a scripted model
   over the OpenAI wire: model requests and the tokens they carry, one call per step against code mode.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

from toolbridge.agent import Agent, AgentDefinition
from toolbridge.config.model import Config, ServerConfig
from toolbridge.models import OpenAIChatModel
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.tools import Toolbox, ToolRegistry, tool
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


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


CHAIN_CODE = "total = 0\nfor i in range(10):\n    total = add(a=total, b=i)\ntotal"


def chain_turns(mode: str) -> list[Turn]:
    if mode == "code":
        return [Turn.tool_calls(ToolCallSpec("run_code", {"code": CHAIN_CODE})), Turn.text("45")]
    sums = [sum(range(i)) for i in range(11)]
    calls = [Turn.tool_calls(ToolCallSpec("add", {"a": sums[i], "b": i})) for i in range(10)]
    return [*calls, Turn.text("45")]


async def chain_cost(mode: str) -> tuple[int, int]:
    """(model requests, estimated tokens sent) for the ten-call chain."""
    definition = AgentDefinition(tool_mode="code" if mode == "code" else None, max_steps=20)
    async with ScriptedModelServer(chain_turns(mode)) as server:
        model = OpenAIChatModel("scripted", base_url=server.base_url, api_key="bench", tool_mode="native")
        try:
            result = await Agent(model, ToolRegistry(native=[add]), definition).run("Add 0 to 9, one by one.")
        finally:
            await model.aclose()
        assert result.output == "45", result.stop_detail
        sent = sum(len(json.dumps(request.body)) for request in server.requests)
        return len(server.requests), sent // 4


async def chain_costs() -> None:
    print("a chain of ten dependent calls")
    classic, code = await chain_cost("classic"), await chain_cost("code")
    print(f"{'':>14} {'requests':>9} {'tokens sent':>12}")
    print(f"{'one per step':>14} {classic[0]:>9} {classic[1]:>12,}")
    print(f"{'code mode':>14} {code[0]:>9} {code[1]:>12,}")
    print(f"code mode / one per step: requests {code[0] / classic[0]:.2f}, tokens {code[1] / classic[1]:.2f}")


async def main() -> None:
    async with Toolbox(Config(servers=servers())) as box:
        tools = await box.list_tools()
    first_request_sizes(tools)
    recall_at_5(tools)
    await chain_costs()


if __name__ == "__main__":
    anyio.run(main)
