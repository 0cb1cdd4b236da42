"""The public surface is small and deliberate: a change to it should be a conscious one."""

import toolbridge


def test_top_level_exports_are_exactly_the_public_api() -> None:
    assert set(toolbridge.__all__) == {
        "Agent",
        "ConfigError",
        "ConnectionLostError",
        "RunResult",
        "ServerError",
        "ServerStartError",
        "ServerTimeoutError",
        "ToolArgumentsError",
        "ToolCall",
        "ToolError",
        "ToolResult",
        "ToolSpec",
        "ToolbridgeError",
        "UnknownToolError",
        "__version__",
    }
    for name in toolbridge.__all__:
        assert hasattr(toolbridge, name), name


def test_every_error_derives_from_the_one_root() -> None:
    errors = [getattr(toolbridge, n) for n in toolbridge.__all__ if n.endswith("Error")]
    assert errors
    for error in errors:
        assert issubclass(error, toolbridge.ToolbridgeError)
