"""A server that never answers: it reads its stdin but never writes (for connect timeouts).

It prints its pid on stderr so a test can check the process was stopped.
"""

import os
import sys

print(f"silent server pid {os.getpid()}", file=sys.stderr, flush=True)
for _ in sys.stdin:
    pass
