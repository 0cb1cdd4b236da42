"""A server that fails before the MCP handshake: a few lines on stderr, then exit code 3."""

import sys

print("starting the server", file=sys.stderr)
print("error: could not open database 'missing.db'", file=sys.stderr)
print("giving up", file=sys.stderr, flush=True)
sys.exit(3)
