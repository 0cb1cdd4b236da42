"""`toolbridge parse`."""
