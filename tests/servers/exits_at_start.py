"""A server that fails before the MCP handshake: a few lines on stderr, then exit code 3.

With `START_LOG` set in its environment, it first appends a line to that file, so tests can count starts.
"""

import os
import sys

if os.environ.get("START_LOG"):
    with open(os.environ["START_LOG"], "a") as log:
        log.write("started\n")
print("starting the server", file=sys.stderr)
print("error: could not open database 'missing.db'", file=sys.stderr)
print("giving up", file=sys.stderr, flush=True)
sys.exit(3)
