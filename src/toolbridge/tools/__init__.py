"""toolbridge.tools."""
