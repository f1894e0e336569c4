"""Starting the detached background worker that runs a process's turns.

Rules (docs/processes.md "Where turns run"):
- The worker is ``python -m vance_cli.background`` in its own session
  (``start_new_session``: Ctrl-C in the terminal and the command's exit do
  not reach it), stdin from ``/dev/null``, stdout and stderr appended to
  ``<state>/logs/process-<processId>.log``, no inherited file descriptors,
  in the command's working folder (so ``.vance/`` is found the same way). It
  gets the resolved tenant, project, user, session and language as flags and
  the home folder as ``--home`` (when one is in use); everything else (the
  LLM endpoint, the key) comes from the inherited environment and the same
  config file — the key is never put on a command line.
- Right after the start the launcher marks the process ``RUNNING`` under the
  worker's pid (``worker.hand_over``), so a worker that dies before its
  first heartbeat is still found by stale detection; the worker adopts it.
- A batch worker gets several ids, all handed over; it runs them one after
  the other and keeps a heartbeat for those that wait (``background_body``).
  It logs to the first process's log file.
- The launcher reaps every worker it starts as soon as it exits: a daemon
  thread waits on its ``Popen`` (never ``waitpid(-1)`` or a SIGCHLD handler,
  which would take the exit status of children other code waits for), so a
  long-lived launcher — ``vance mcp``, ``vance shell`` — keeps no zombies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from vance_cli.base.paths import Paths, ensure
from vance_cli.base.records import frozen
from vance_cli.base.scope import SCOPE_KEYS
from vance_cli.processes.inputs import has_pending, is_passive
from vance_cli.processes.jobs import defer_turn
from vance_cli.processes.model import StartHow, Status
from vance_cli.processes.stream import stream_path
from vance_cli.processes.worker import hand_over

if TYPE_CHECKING:
    from vance_cli.processes.model import Process
    from vance_cli.workspace import Workspace

WORKER_MODULE = "vance_cli.background"
"""Module run with ``python -m`` as the background worker."""

def home_of(paths: Paths) -> Path | None:
    """Return the ``--home`` folder that yields ``paths``, or None for platform dirs."""
    base = paths.config_dir
    if paths.data_dir == base / "data" and paths.state_dir == base / "state":
        return base
    return None


def worker_command(ws: Workspace, process_id: str, *more: str) -> list[str]:
    """Return the worker's argv: the interpreter, ``-m vance_cli.background``, flags, the ids."""
    settings = ws.settings
    argv = [sys.executable, "-m", WORKER_MODULE]
    home = home_of(settings.paths)
    if home is not None:
        argv += ["--home", str(home)]
    for key in SCOPE_KEYS:
        argv += [f"--{key}", str(settings.get(key))]
    return [*argv, process_id, *more]


def worker_env(ws: Workspace, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the worker's environment: this one, without ``VANCE_HOME`` when no home is used."""
    env = dict(os.environ if environ is None else environ)
    if home_of(ws.settings.paths) is None:
        env.pop("VANCE_HOME", None)
    return env


def log_file(ws: Workspace, process_id: str) -> Path:
    """Return ``<state>/logs/process-<processId>.log`` (its folder created)."""
    return ensure(ws.settings.paths.logs_dir) / f"process-{process_id}.log"


def start_worker(ws: Workspace, process_id: str, *more: str) -> tuple[int, Path]:
    """Start the detached worker for a process and hand the process over to it.

    Args:
        ws: workspace (its scope and home are passed on).
        process_id: full id of a process that can start a turn.
        more: full ids of processes the worker runs after it, one after the other
            (a batch); they are handed over too.

    Returns:
        ``(worker pid, log file)``.

    Raises:
        OSError: the interpreter cannot be started or the log not opened.
    """
    log = log_file(ws, process_id)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            worker_command(ws, process_id, *more), cwd=ws.cwd, env=worker_env(ws),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True)
    _reap_when_done(proc)
    for full_id in (process_id, *more):
        hand_over(ws, full_id, proc.pid)
    return proc.pid, log


def _reap_when_done(proc: subprocess.Popen[bytes]) -> None:
    """Wait for ``proc`` on a daemon thread, so its exit status is collected when it exits.

    The thread also keeps the ``Popen`` referenced while the worker runs, so no
    "still running" warning fires when it would otherwise be collected.
    """
    threading.Thread(target=proc.wait, name=f"reap-worker-{proc.pid}", daemon=True).start()


def held(ws: Workspace, process: Process) -> StartHow | None:
    """Say why no turn of the process starts now, or None when one can."""
    engine = ws.engines.get(process.engine)
    if engine is None or (engine.run_turn is None and engine.run_process is None):
        return StartHow.NO_ENGINE
    if is_passive(process):
        return StartHow.PASSIVE
    if process.status in (Status.CLOSED, Status.RUNNING):  # RUNNING: its drive loop goes on
        return StartHow.CLOSED if process.status is Status.CLOSED else StartHow.RUNNING
    if not has_pending(ws, process.id):
        return StartHow.NOTHING_TO_DO
    if not ws.settings.llm_configured and not ws.settings.team:  # a team's workers have theirs
        return StartHow.WAITING_FOR_LLM
    return None


@frozen
class Launched:
    """Who runs a process's turns now (``launch``).

    Attributes:
        worker_pid: the detached worker's pid (one machine), else None.
        log: its log file, else None.
        job: in team mode, the ``vance.turn`` job deferred for the (first) process;
            None when a turn of it already waited in the queue, or on one machine.
    """

    worker_pid: int | None = None
    log: Path | None = None
    job: int | None = None


def launch(ws: Workspace, process_id: str, *more: str) -> Launched:
    """Get the processes' turns run elsewhere: a detached worker, or a team's queue.

    On one machine a worker starts (``start_worker``), live output emptied: the
    worker needs a moment before its turn starts the stream file afresh, and a
    follower in between must see nothing, not the previous turn's output. In team
    mode a ``vance.turn`` job is deferred for each process (``jobs.defer_turn``);
    the team's ``vance worker`` hosts run them.

    Raises:
        OSError: the worker cannot be started. StateError: the server failed.
    """
    if ws.settings.team:
        deferred = [defer_turn(ws, full_id) for full_id in (process_id, *more)]
        return Launched(job=deferred[0])
    for full_id in (process_id, *more):
        path = stream_path(ws, full_id)
        with suppress(OSError):  # costs the follower only, as StreamFile's writes
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
    pid, log = start_worker(ws, process_id, *more)
    return Launched(pid, log)
