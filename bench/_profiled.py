"""Run the `toolbridge` command line under cProfile, for seeing where a benchmark's server spends its time.

    python bench/_profiled.py OUT gateway --http ...     # what `python -m toolbridge gateway --http ...` does

The profile is written to `OUT.<pid>.prof` when the command ends (uvicorn ends on SIGTERM by itself; a
stdio gateway when its client closes stdin; this script makes SIGTERM end it too). Read it with
`python -m pstats OUT.<pid>.prof`. Benchmarks run their gateway through this when
`$TOOLBRIDGE_BENCH_PROFILE` names OUT (see `toolbridge()` in `gateway.py`). Not shipped: a tool for
looking, not part of toolbridge.
"""

from __future__ import annotations

import cProfile
import importlib
import os
import runpy
import signal
import sys
import time

_IMPORTED_FIRST = (
    "toolbridge.cli",
    "toolbridge.gateway.http",
    "toolbridge.tools",
    "toolbridge.store",
    "uvicorn",
)


def main() -> None:
    out, arguments = sys.argv[1], sys.argv[2:]
    sys.argv = ["toolbridge", *arguments]

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)  # the command's own handlers (uvicorn's) replace this one
    for module in _IMPORTED_FIRST:  # outside the profile: starting up is not what a call costs
        importlib.import_module(module)
    # CPU time, not wall time: on a shared machine a write that wakes another process can cost this one
    # its core for a while, which wall time would charge to whatever function made the write.
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    try:
        runpy.run_module("toolbridge", run_name="__main__", alter_sys=True)
    finally:
        profile.disable()
        profile.dump_stats(f"{out}.{os.getpid()}.prof")


if __name__ == "__main__":
    main()
