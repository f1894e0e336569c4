"""What happened to a process's pending turns, and what to do next: one view, plain data.

``start`` (``processes.start``) says how it dealt with a process;
``next_steps`` turns that into what every front end tells its reader: what
happened (``Happened``) and the next steps (``Step``), with the facts they
name (the worker's pid, why it failed or closed). The command line renders
it as ``work`` / ``then`` lines (``cli/run.py``), the MCP server as a note
for the calling model (``mcp/handlers.py``); neither decides again which
case applies (docs/processes.md "Where turns run").
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from vance_cli.base.records import frozen
from vance_cli.processes.model import CloseReason, Process, StartHow

if TYPE_CHECKING:
    from vance_cli.processes.start import Started


class Happened(StrEnum):
    """What became of a process's pending turns."""

    SETTLED = "settled"
    """Its turns ran (here, or a worker's that was waited for) and settled."""
    FAILED = "failed"
    """Its turn failed or was stopped (``reason`` says why)."""
    BACKGROUND = "background"
    """A worker runs them (``worker_pid``)."""
    WAITING_FOR_LLM = "waiting_for_llm"
    """No LLM is configured: the input waits, the process ``IDLE``."""
    RUNNING = "running"
    """A turn is under way elsewhere (``worker_pid``); it takes the new input next."""
    CLOSED = "closed"
    """The process is closed (``reason``: its outcome's, if any)."""
    NO_ENGINE = "no_engine"
    """Its engine has no code here."""
    NOTHING_TO_DO = "nothing_to_do"
    """No input was pending."""
    PASSIVE = "passive"
    """A mailbox: it runs no turns."""


class Step(StrEnum):
    """Something the reader can do next."""

    CONFIGURE_LLM = "configure_llm"
    """Configure an LLM (then run the waiting turn)."""
    WAIT = "wait"
    """Wait for the running turn to settle."""
    RESULT = "result"
    """Read the answer."""
    FOLLOW = "follow"
    """Watch the running turn's live output."""
    RUN = "run"
    """Run the waiting turn (``vance process run``; a failed one is retried)."""


WITHOUT_TURN = frozenset({Happened.WAITING_FOR_LLM, Happened.CLOSED, Happened.NO_ENGINE,
                          Happened.PASSIVE})
"""No turn could run, and the input waits (a ``--wait`` exits 75: docs/exit-codes.md)."""


@frozen
class NextSteps:
    """What happened to a process's pending turns and what comes next.

    Attributes:
        happened: what became of them.
        process: the process as it is now.
        steps: what the reader can do next, in the order to do it (may be empty).
        worker_pid: the worker running the turn (background, running), else None.
        reason: why the turn failed or the process closed, if known.
        queued: team mode: the turn waits in the team's queue (or runs on a team's worker).
        job: its job's id, when this command deferred it.
    """

    happened: Happened
    process: Process
    steps: tuple[Step, ...] = ()
    worker_pid: int | None = None
    reason: str | None = None
    queued: bool = False
    job: int | None = None

    @property
    def where(self) -> str:
        """Who runs the turn, as people read it: a worker pid, or the team's queue."""
        if not self.queued:
            return f"worker pid {self.worker_pid}"
        return (f"job {self.job} of the team's queue" if self.job is not None
                else "the team's queue")

    @property
    def failed(self) -> bool:
        """True when the turn failed or was stopped."""
        return self.happened is Happened.FAILED

    @property
    def input_waits(self) -> bool:
        """True when no turn could run and the input waits (``WITHOUT_TURN``)."""
        return self.happened in WITHOUT_TURN


_BY_HOW: dict[str, tuple[Happened, tuple[Step, ...]]] = {
    StartHow.BACKGROUND: (Happened.BACKGROUND, (Step.WAIT, Step.RESULT, Step.FOLLOW)),
    StartHow.WAITING_FOR_LLM: (Happened.WAITING_FOR_LLM, (Step.CONFIGURE_LLM, Step.RUN)),
    StartHow.RUNNING: (Happened.RUNNING, (Step.WAIT, Step.RESULT)),
    StartHow.NO_ENGINE: (Happened.NO_ENGINE, ()),
    StartHow.NOTHING_TO_DO: (Happened.NOTHING_TO_DO, ()),
    StartHow.PASSIVE: (Happened.PASSIVE, ()),
}
"""What happened and the next steps, for each way ``start`` left a process without a turn
run here (``CLOSED`` depends on the close; ``FOREGROUND`` on the turn's report)."""


def next_steps(started: Started, settled: Process | None = None) -> NextSteps:
    """Return what happened to a process's pending turns and what to do next.

    Args:
        started: what ``start`` did with the process.
        settled: the process once its background turn settled, when the caller
            waited for it (``lifecycle.wait_process``); None: as ``started`` left it.

    Returns:
        The view; ``reason`` is the failed turn's, or the closed process's outcome's.
    """
    process, how = settled or started.process, started.how
    if settled is not None and how == StartHow.BACKGROUND:
        if settled.close_reason not in (None, CloseReason.DONE):
            return NextSteps(Happened.FAILED, settled, reason=_outcome_reason(settled))
        return NextSteps(Happened.SETTLED, settled)
    if how == StartHow.CLOSED:
        retry = (Step.RUN,) if process.close_reason == CloseReason.STALE else ()
        return NextSteps(Happened.CLOSED, process, retry, reason=_outcome_reason(process))
    if how in _BY_HOW:
        happened, steps = _BY_HOW[how]
        return NextSteps(happened, process, steps, worker_pid=started.worker_pid,
                         queued=started.worker_pid is None and how in (StartHow.BACKGROUND,
                                                                       StartHow.RUNNING),
                         job=started.job)
    report = started.report
    if report is not None and report.failed:
        return NextSteps(Happened.FAILED, process, reason=report.reason)
    return NextSteps(Happened.SETTLED, process)


def _outcome_reason(process: Process) -> str | None:
    """The reason a closed process's outcome names, if any."""
    why = (process.outcome or {}).get("reason")
    return str(why) if why else None
