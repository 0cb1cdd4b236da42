"""toolbridge.parsing."""
