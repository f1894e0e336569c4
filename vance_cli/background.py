"""``python -m vance_cli.background``: the detached worker that runs a process's turns.

Started by ``processes.launcher.start_worker`` (``vance delegate``, ``process
create``, ``process steer``, the async Slartibartfast fallback, a child's
result waking its parent), never by people. Usage::

    python -m vance_cli.background [--home DIR] [--tenant T] [--project P] [--user U]
        [--session S] [--lang L] PROCESS_ID [PROCESS_ID...]

Its stdout and stderr go to ``<state>/logs/process-<processId>.log``; it
prints one line when it starts and one when it ends. Exit 0 unless the last
turn failed, 143 on SIGTERM (``vance process stop``). With several ids (a
batch) it runs them one after the other; SIGTERM then stops the process
whose turn runs, and the worker goes on with the next.

SIGTERM (``vance process stop``) is handled from the first line of
``main`` on, before the worker's body is imported (``_body``), so a stop
while the worker is still loading ends it the same way (logged, exit 143)
as one during the LLM call. A stop in the interpreter's own start-up,
before ``main`` runs (tens of ms), ends the worker by the default action;
``process stop`` closes the process and its close hook settles the audit
file in either case.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from vance_cli.base.scope import SCOPE_KEYS
from vance_cli.base.signals import EXIT_TERMINATED, WorkerTerminated, install_sigterm, stop_cause


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m vance_cli.background",
                                     description="Background worker of a vance process.")
    parser.add_argument("--home")
    for key in SCOPE_KEYS:
        parser.add_argument(f"--{key}")
    parser.add_argument("process_ids", nargs="+", metavar="process_id")
    return parser.parse_args(argv)


def _body(args: argparse.Namespace) -> tuple[int, str]:
    """Build the workspace from the flags and run the process's turns; return (code, summary)."""
    from vance_cli.background_body import run  # deferred: the SIGTERM handler comes first

    return run(args.process_ids, args.home, {key: getattr(args, key) for key in SCOPE_KEYS})


def main() -> int:
    """Run the worker; return its exit code (0 DONE, 1 otherwise, 143 on SIGTERM)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        install_sigterm()
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                            format="%(asctime)s %(levelname)s %(message)s")
        args = _parse(sys.argv[1:])
        print(f"{stamp} worker {os.getpid()}: process {' '.join(args.process_ids)}",
              flush=True)
        code, summary = _body(args)
    except BaseException as exc:
        if not isinstance(stop_cause(exc), WorkerTerminated):
            raise
        print(f"{stamp} worker {os.getpid()}: received SIGTERM", flush=True)
        return EXIT_TERMINATED
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"{stamp} worker {os.getpid()}: {summary}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
