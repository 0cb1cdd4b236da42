"""`toolbridge call`."""
