"""``vance worker``: run a team's turns (jobs of the ``vance`` queue) on this host.

Rules (docs/teams.md#vance-worker):
- One procrastinate worker takes ``vance.turn`` jobs, ``concurrency`` at a time,
  each in a thread with a workspace of its own (the job's scope, this host's
  config: its LLM, its keys). A second one, of one slot, runs the periodic
  ``vance.retry_stalled`` task, so a host busy with turns still takes over the
  turns of a dead one.
- A turn job runs under the identity ``host:pid:job<id>.<attempt>``, stored on
  the process (``worker``); heartbeats and settles compare-and-set on it. A job
  that finds its process RUNNING under another identity is a stalled job run
  again: it takes the turn over (``processes.takeover``).
- ``retry_stalled`` hands every ``doing`` job whose worker's procrastinate
  heartbeat is older than ``process.stale_timeout`` back to the queue (its lock
  stays: still one turn per process). Workers beat every
  ``process.heartbeat_interval``; the retry runs every ``RETRY_PERIOD_S``.
- SIGINT/SIGTERM: no new job starts, the running turns finish, then it exits
  0; a second signal exits at once (130), and the team takes over its turns.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from vance_cli.base.config import Settings, load_settings
from vance_cli.base.errors import VanceError
from vance_cli.processes.inputs import has_pending
from vance_cli.processes.jobs import QUEUE, TURN_TASK
from vance_cli.processes.model import Status, job_identity
from vance_cli.processes.queued import run_child_job
from vance_cli.processes.runtime import CHILD_RUNNER, TurnReport, drive, run_turn, wake_parent
from vance_cli.processes.takeover import adopt
from vance_cli.processes.worker import acting_as
from vance_cli.workspace import Workspace

if TYPE_CHECKING:
    from procrastinate import App
    from procrastinate.job_context import JobContext

RETRY_TASK = "vance.retry_stalled"
"""The periodic task that hands a dead worker's turns back to the queue."""

SYSTEM_QUEUE = "vance.system"
"""The queue of vance's own periodic tasks (one slot per host, apart from the turns)."""

RETRY_PERIOD_S = 2
"""Seconds between two runs of ``retry_stalled`` (a whole number: cron's seconds field)."""

log = logging.getLogger("vance.worker")


def run_job(process_id: str, scope: Mapping[str, str], retry: bool, identity: str,
            home: str | None, *, child: bool = False, close: bool = False) -> str:
    """Run a process's due turns as one attempt of a turn job; return a summary line.

    Args:
        process_id: full id.
        scope: tenant, project, user, session, lang as the deferring command resolved them.
        retry: reopen a process closed ``STALE`` first (``vance process run``).
        identity: this attempt's worker identity (``model.job_identity``).
        home: the worker's ``--home``, or None.
        child: one turn of an orchestrator's child (``run_turn(inline=True)``).
        close: (child) a turn that answers closes it ``DONE``.

    Returns:
        What happened, one line (the job's result).
    """
    ws = Workspace(load_settings(flags=dict(scope), home=home))
    try:
        with acting_as(identity):
            token = CHILD_RUNNER.set(run_child_job)  # children's turns: jobs of their own
            try:
                process = adopt(ws, process_id, identity)
                if process.status is Status.CLOSED and not retry:
                    return f"process {process_id}: {process.label}, no turn"
                taken = process.status is Status.RUNNING and process.worker == identity
                if child and not taken and not has_pending(ws, process.id):
                    return f"process {process_id}: its turn ran already, no turn"
                if child:
                    report = run_turn(ws, process_id, adopt=taken, inline=True, close=close)
                else:
                    report = drive(ws, process_id, adopt=taken, retry=retry)
                    if report.number is None:  # a retry after the settle: the wake-up
                        wake_parent(ws, report.process)  # may not have been deferred
            finally:
                CHILD_RUNNER.reset(token)
        return _summary(report, taken)
    except VanceError as exc:  # the process cannot run (gone, closed, no engine …)
        return f"process {process_id}: no turn: {exc.message}"
    finally:
        ws.close()


def _summary(report: TurnReport, taken: bool) -> str:
    process = report.process
    how = "taken over, " if taken else ""
    return (f"process {process.id}: {how}turn {report.number} ended {report.settle},"
            f" {process.label}")


def make_app(url: str, settings: Settings, home: str | None) -> App:
    """Return the procrastinate app of a team's server with vance's two tasks on it."""
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    stale = settings.process_stale_timeout
    host = socket.gethostname()

    @app.task(name=TURN_TASK, queue=QUEUE, pass_context=True)
    def turn(context: JobContext, process_id: str, scope: dict[str, str],
             retry: bool = False, child: bool = False, close: bool = False) -> str:
        job = context.job
        assert job.id is not None
        identity = job_identity(host, os.getpid(), job.id, job.attempts)
        started = time.monotonic()
        line = run_job(process_id, scope, retry, identity, home, child=child, close=close)
        log.warning("job %s: %s (%.1f s)", job.id, line, time.monotonic() - started)
        return line

    @app.periodic(cron=f"* * * * * */{RETRY_PERIOD_S}", periodic_id="stalled")
    @app.task(name=RETRY_TASK, queue=SYSTEM_QUEUE, pass_context=True)
    async def retry_stalled(context: JobContext, timestamp: int) -> int:
        manager = context.app.job_manager
        stalled = list(await manager.get_stalled_jobs(queue=QUEUE, task_name=TURN_TASK,
                                                 seconds_since_heartbeat=stale))
        for job in stalled:
            try:
                await manager.retry_job(job)
            except Exception as exc:  # another host retried it first
                log.debug("job %s not retried: %s", job.id, exc)
            else:
                log.warning("job %s (process %s): its worker stopped beating, retried",
                            job.id, job.task_kwargs.get("process_id"))
        return len(stalled)

    del turn, retry_stalled  # registered on the app
    return app


class Host:
    """This host's two procrastinate workers (turns, and the periodic retry), run and stopped.

    Args:
        settings: the worker's settings (``state.url`` names the team's server).
        home: its ``--home``, or None.
        concurrency: turns run at once.
    """

    def __init__(self, settings: Settings, home: str | None, concurrency: int) -> None:
        url = settings.state_target
        assert isinstance(url, str)
        self.settings, self.concurrency = settings, concurrency
        self.app = make_app(url, settings, home)
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self._workers: list[Any] = []
        self._stopped = False

    async def run(self, on_ready: Callable[[str], None] | None = None) -> None:
        """Take jobs until ``stop``; the running turns finish first."""
        from procrastinate.worker import Worker

        settings = self.settings
        beat = max(0.5, min(settings.process_heartbeat_interval,
                            settings.process_stale_timeout / 3))
        common: dict[str, Any] = {
            "install_signal_handlers": False, "update_heartbeat_interval": beat,
            "stalled_worker_timeout": settings.process_stale_timeout,
            "fetch_job_polling_interval": 1.0, "abort_job_polling_interval": 1.0}
        # a sync task runs in the loop's default executor, whose size is otherwise the
        # machine's cores + 4: turns waiting for the LLM need a thread each, up to concurrency
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(
            max_workers=self.concurrency + 2, thread_name_prefix="vance-turn"))
        async with self.app.open_async():
            self._workers = [  # a finished job's row goes: the turns table is the record
                Worker(self.app, queues=[QUEUE], concurrency=self.concurrency, name=self.name,
                       delete_jobs="successful", **common),
                Worker(self.app, queues=[SYSTEM_QUEUE], concurrency=1,
                       name=f"{self.name}:system", delete_jobs="always", **common)]
            if self._stopped:
                return
            if on_ready is not None:
                on_ready(f"vance worker {self.name}: {self.concurrency} turns at a time on"
                         f" queue {QUEUE}")
            await asyncio.gather(*(worker.run() for worker in self._workers))

    def stop(self) -> None:
        """Take no more jobs (from any thread); ``run`` returns when the running ones end."""
        self._stopped = True
        for worker in self._workers:
            worker.stop()


def serve(settings: Settings, home: str | None, concurrency: int,
          on_ready: Callable[[str], None] | None = None) -> int:
    """Run this host's worker until SIGINT or SIGTERM; return the exit code.

    Args:
        settings: the worker's settings (``state.url`` names the team's server).
        home: its ``--home``, or None.
        concurrency: turns run at once.
        on_ready: told one line when the worker takes jobs.

    Returns:
        0 after a graceful stop (a second signal exits at once with 130).
    """
    host = Host(settings, home, concurrency)
    logging.basicConfig(format="%(asctime)s %(message)s", level=logging.WARNING)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        signals = [0]

        def on_signal() -> None:
            signals[0] += 1
            if signals[0] > 1:
                os._exit(130)  # the team takes its turns over
            host.stop()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        await host.run(on_ready)

    asyncio.run(main())
    return 0
