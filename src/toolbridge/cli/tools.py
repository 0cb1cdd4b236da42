"""`toolbridge tools`."""
