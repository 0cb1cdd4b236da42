"""`toolbridge servers`."""
