"""The public surface is small and deliberate: a change to it should be a conscious one."""

import toolbridge


def test_top_level_exports_are_exactly_the_public_api() -> None:
    assert set(toolbridge.__all__) == {
        "Agent",
        "ConfigError",
        "ConnectionLostError",
        "ModelError",
        "RunResult",
        "ServerError",
        "ServerStartError",
        "ServerTimeoutError",
        "StoreError",
        "ToolArgumentsError",
        "ToolCall",
        "ToolError",
        "ToolResult",
        "ToolSpec",
        "Toolbox",
        "ToolbridgeError",
        "ToolsNotSupportedError",
        "UnknownToolError",
        "UsageError",
        "__version__",
    }
    for name in toolbridge.__all__:
        assert hasattr(toolbridge, name), name


def test_every_error_derives_from_the_one_root() -> None:
    errors = [getattr(toolbridge, n) for n in toolbridge.__all__ if n.endswith("Error")]
    assert errors
    for error in errors:
        assert issubclass(error, toolbridge.ToolbridgeError)


def test_importing_toolbridge_is_cheap_until_the_agent_is_used() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, toolbridge; print('mcp' in sys.modules); toolbridge.Agent; print('mcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_the_toolbox_is_importable_from_the_top_level() -> None:
    from toolbridge import Toolbox
    from toolbridge.tools import Toolbox as ToolsToolbox

    assert Toolbox is ToolsToolbox
