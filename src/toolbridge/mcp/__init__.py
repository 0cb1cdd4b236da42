"""toolbridge.mcp."""
