"""``python -m vance_cli.slart``: the detached Slartibartfast worker of the async fallback.

Started by ``vance delegate --async-fallback`` (``launch.launch_worker``),
never by people. Usage::

    python -m vance_cli.slart [--home DIR] [--tenant T] [--project P] [--user U]
        [--session S] [--lang L] --deadline EPOCH --timeout S PROCESS_ID

Its stdout and stderr go to ``<state>/logs/slart-<processId>.log``; it
prints one line when it starts and one when it ends. Exit 0 when the
process closed DONE, 1 otherwise, 143 on SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from vance_cli.worker import WorkerTerminated, install_sigterm


def _parse(argv: list[str]) -> argparse.Namespace:
    from vance_cli.slart.launch import FLAG_KEYS

    parser = argparse.ArgumentParser(prog="python -m vance_cli.slart",
                                     description="Background Slartibartfast worker.")
    parser.add_argument("--home")
    for key in FLAG_KEYS:
        parser.add_argument(f"--{key}")
    parser.add_argument("--deadline", type=float, required=True,
                        help="cutoff, seconds since the epoch")
    parser.add_argument("--timeout", type=float, required=True, help="cutoff length, seconds")
    parser.add_argument("process_id")
    return parser.parse_args(argv)


def main() -> int:
    """Run the worker; return its exit code.

    SIGTERM (``vance process stop``) is handled from the first line of this
    function on, before the engine's imports, so a stop while the worker is
    still loading ends it the same way (logged, exit 143) as one during the
    LLM call. The start line is printed once the handler is in place. A stop
    in the interpreter's own start-up, before this function runs (tens of
    ms), ends the worker by the default action; ``process stop`` closes the
    process and its close hook settles the audit file in either case.
    """
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        install_sigterm()
        args = _parse(sys.argv[1:])
        print(f"{stamp} slartibartfast worker {os.getpid()}: process {args.process_id}",
              flush=True)
        from vance_cli.slart.launch import FLAG_KEYS, work

        flags = {key: getattr(args, key) for key in FLAG_KEYS}
        code, summary = work(args.process_id, args.deadline, args.timeout, args.home, flags)
    except WorkerTerminated:
        print(f"{stamp} worker {os.getpid()}: received SIGTERM", flush=True)
        return 143
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"{stamp} worker {os.getpid()}: {summary}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
