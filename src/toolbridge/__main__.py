"""`python -m toolbridge` runs the command line."""

from toolbridge.cli import main

main()
