"""`toolbox.content`: resources and prompts across servers, found by URI (listed or matching a template)
or by name, and limited to an agent's servers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.errors import UsageError
from toolbridge.tools import Toolbox, template_pattern

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("template", "uri", "matches"),
    [
        ("note://{name}", "note://readme", True),
        ("note://{name}", "note://a/b", False),
        ("file:///{+path}", "file:///a/b.txt", True),
        ("demo://text/{id}", "demo://blob/1", False),
        ("a.b://{x}", "aXb://1", False),  # literal parts are literal
    ],
)
def test_template_patterns(template: str, uri: str, matches: bool) -> None:
    assert bool(template_pattern(template).fullmatch(uri)) is matches


@pytest.mark.slow
async def test_resources_and_prompts_are_found_across_servers_and_within_an_agents_servers(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    config = Config(servers={"basic": stdio_server("basic"), "library": stdio_server("library")})
    async with Toolbox(config) as toolbox:
        everywhere = toolbox.content
        basic_only = toolbox.content.only(["basic"])
        listed = await everywhere.server_of("note://readme")
        templated = await everywhere.server_of("shelf://dune")
        prompt = await everywhere.get_prompt("greet")
        prompts_of_basic = await basic_only.prompts()
        # With one server only, it is the one asked (here it will say it has no such resource).
        only_one = await basic_only.server_of("note://readme")
        with pytest.raises(UsageError, match="No server has a prompt named 'greet'"):
            await basic_only.get_prompt("greet")

    assert (listed, templated, prompt.server) == ("library", "library", "library")
    assert prompts_of_basic.items == []
    assert prompts_of_basic.errors == {}
    assert only_one == "basic"
