"""A real worker process for lifecycle tests: one turn of a process via ``worker.running``.

Usage: python turn_worker.py PROCESS_ID MODE SECONDS
  MODE done  → works SECONDS, then closes DONE with a recipe path as its result
  MODE fail  → works SECONDS, then raises (closed STALE by ``running``)
  MODE idle  → works SECONDS, then ends the turn (back to IDLE)
  MODE hold  → works SECONDS without looking at stop requests (a worker stuck in a long
               call): only a signal ends it early
Prints "running <pid>" once RUNNING, "finished" when the turn is over.
"""

from __future__ import annotations

import os
import sys
import time

from vance_cli.base.config import load_settings
from vance_cli.processes.model import CloseReason
from vance_cli.processes.worker import running
from vance_cli.workspace import Workspace


def main() -> int:
    process_id, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    ws = Workspace(load_settings())
    with running(ws, process_id) as run:
        sys.stdout.write(f"running {os.getpid()}\n")
        sys.stdout.flush()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and (mode == "hold" or not run.stop_requested):
            time.sleep(0.02)
        if run.stop_requested:
            sys.stdout.write("stop requested\n")
        elif mode == "done":
            run.close(CloseReason.DONE, {"recipePath": "recipes/_slart/r1/tea.yaml"})
        elif mode == "fail":
            raise RuntimeError("the model answered nonsense")
    sys.stdout.write("finished\n")
    sys.stdout.flush()
    ws.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
