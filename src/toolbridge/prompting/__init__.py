"""toolbridge.prompting."""
