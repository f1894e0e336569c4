"""audit.json: rewritten whole at each change, frozen once final."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from vance_cli.engines.slartibartfast.audit import Audit, layer_path, run_folder
from vance_cli.processes.model import Status
from vance_cli.processes.records import apply_transition
from vance_cli.processes.worker import worker_identity
from vance_cli.workspace import Workspace

if TYPE_CHECKING:
    from vance_cli.engines.slartibartfast.start import Started



def _read(path: Path) -> dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_every_change_is_on_disk(tmp_path: Path) -> None:
    path = run_folder(tmp_path, "r1") / "audit.json"
    audit = Audit.create(path, runId="r1", task="t")
    assert _read(path)["state"] == "CREATED"
    audit.begin_attempt(1, {"timeoutSeconds": 5})
    on_disk = _read(path)
    assert on_disk["state"] == "RUNNING" and on_disk["attempt"] == 1
    assert on_disk["attempts"][0]["finishedAt"] is None  # type: ignore[index]
    audit.end_attempt(rawReply="```yaml…", errors=["bad engine"], valid=False)
    assert _read(path)["attempts"][0]["errors"] == ["bad engine"]  # type: ignore[index]
    assert audit.finish("FAILED", "no valid recipe")
    final = _read(path)
    assert (final["state"], final["reason"]) == ("FAILED", "no valid recipe")
    assert [p.name for p in path.parent.iterdir()] == ["audit.json"]  # no temp files left


def test_final_state_is_frozen(tmp_path: Path) -> None:
    audit = Audit.create(tmp_path / "audit.json", runId="r")
    assert audit.finish("TIMED_OUT", "cutoff")
    assert not audit.finish("GENERATED")
    assert not audit.update(state="RUNNING")
    assert not audit.begin_attempt(2, {})
    assert _read(audit.path)["state"] == "TIMED_OUT"


def test_finish_rejects_a_non_final_state(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a final"):
        Audit.create(tmp_path / "audit.json").finish("RUNNING")


def test_resume_keeps_what_the_launcher_wrote(tmp_path: Path) -> None:
    path = tmp_path / "audit.json"
    Audit.create(path, runId="r", mode="async")
    resumed = Audit.resume(path, workerPid=7)
    assert resumed.snapshot()["mode"] == "async" and _read(path)["workerPid"] == 7
    path.write_text("{broken", encoding="utf-8")
    fresh = Audit.resume(path)
    assert "unreadable" in str(fresh.snapshot()["note"])


def test_concurrent_writers_leave_valid_json(tmp_path: Path) -> None:
    audit = Audit.create(tmp_path / "audit.json")

    def write(n: int) -> None:
        for i in range(20):
            audit.update(**{f"k{n}": i})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {f"k{n}" for n in range(4)} <= set(_read(audit.path))


def test_layer_path() -> None:
    assert layer_path("r1", "x.yaml") == "recipes/_slart/r1/x.yaml"


# --- the close hook: a process closed by someone else ends its audit too ---------------------


def _started_slart(ws: Workspace) -> Started:
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.engines.slartibartfast.start import start_slart

    return start_slart(ws, DelegateRequest(task="Turn off the lights", name="lights"), None,
                       None, 60.0, "sync")


def _audit_on_disk(started: Started) -> dict:
    return json.loads(Path(started.process.params["auditFile"]).read_text(encoding="utf-8"))


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_audit_file_is_recorded_in_the_process_params(ws: Workspace) -> None:
    started = _started_slart(ws)
    assert started.process.params["auditFile"] == str(started.control.audit.path)
    assert _audit_on_disk(started)["state"] == "CREATED"


def test_a_reaped_slart_process_ends_its_audit_stale(ws: Workspace) -> None:
    from vance_cli.processes.lifecycle import reap_stale
    from vance_cli.state import process_store

    started = _started_slart(ws)
    started.control.audit.begin_attempt(1, {"model": "m"})  # the worker is mid-run …
    pid = _dead_pid()
    with ws.db.transaction():
        apply_transition(ws.db, started.process.id, Status.IDLE, Status.RUNNING, note="worker")
        process_store.set_worker(ws.db, started.process.id, pid, worker_identity(pid))
    [reaped] = reap_stale(ws)  # … and was SIGKILLed
    audit = _audit_on_disk(started)
    assert reaped.close_reason == "STALE"
    assert audit["state"] == "STALE" and audit["reason"] == reaped.outcome["reason"]
    assert f"worker process {pid} is gone" in audit["reason"]
    assert audit["closeReason"] == "STALE" and len(audit["attempts"]) == 1


def test_a_slart_process_stopped_from_outside_ends_its_audit_stopped(ws: Workspace) -> None:
    from vance_cli.processes.lifecycle import stop_process

    started = _started_slart(ws)
    assert stop_process(ws, started.process.id).stopped
    audit = _audit_on_disk(started)
    assert audit["state"] == "STOPPED" and audit["reason"] == "stopped with 'vance process stop'"


def test_a_final_audit_is_left_alone(ws: Workspace) -> None:
    from vance_cli.processes.lifecycle import stop_process

    started = _started_slart(ws)
    started.control.audit.finish("FAILED", "no valid recipe")
    stop_process(ws, started.process.id)
    assert (_audit_on_disk(started)["state"], _audit_on_disk(started)["reason"]) == \
        ("FAILED", "no valid recipe")


@pytest.mark.parametrize(("reason", "result", "state"), [
    ("STALE", {"reason": "worker gone"}, ("STALE", "worker gone")),
    ("STOPPED", {"reason": "cut off", "timedOut": True}, ("TIMED_OUT", "cut off")),
    ("STOPPED", {}, ("STOPPED", "STOPPED")),
    ("FAILED", None, ("FAILED", "FAILED")),
    ("DONE", {"recipePath": "x"}, None),
])
def test_closed_state_maps_the_close_reason(reason: str, result: dict | None,
                                            state: tuple[str, str] | None) -> None:
    from vance_cli.engines.slartibartfast.audit import closed_state

    process = SimpleNamespace(close_reason=reason, outcome=result)
    assert closed_state(process) == state  # type: ignore[arg-type]


def test_close_hooks_run_per_engine_and_a_failure_is_logged_not_raised(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from vance_cli.engines.registry import Engine, EngineRegistry
    from vance_cli.processes import lifecycle
    from vance_cli.processes.model import ProcessSpec
    from vance_cli.processes.records import create_process

    seen: list[tuple[str, str | None]] = []

    def hook(_ws: Workspace, process: object) -> None:
        seen.append((process.name, process.close_reason))  # type: ignore[attr-defined]
        raise RuntimeError("a broken hook")

    monkeypatch.setitem(sys.modules, "fake_ford", SimpleNamespace(
        ENGINE=Engine("ford", on_close=hook)))
    ws.__dict__["engines"] = EngineRegistry({"ford": "fake_ford"})
    ford = create_process(ws, ProcessSpec(recipe="translate", name="t"))
    other = create_process(ws, ProcessSpec(recipe="discuss", name="d"))  # arthur: no hook
    after, closed_from = lifecycle.close_process(ws, ford.id, "STOPPED")
    assert closed_from is Status.IDLE and after.status is Status.CLOSED  # the close stands
    lifecycle.close_process(ws, other.id, "STOPPED")
    assert seen == [("t", "STOPPED")]  # only the engine with a hook
    assert [r.getMessage() for r in caplog.records] == [
        f"the ford close hook failed for process {ford.id}: RuntimeError: a broken hook"]


def test_a_stop_from_another_process_wins_over_a_late_worker_write(tmp_path: Path) -> None:
    """Compare-and-set on the file: the worker's copy cannot write RUNNING over STOPPED."""
    from vance_cli.engines.slartibartfast.audit import Audit

    path = tmp_path / "audit.json"
    worker = Audit.create(path, runId="r")
    assert worker.begin_attempt(1, {"model": "m"})
    stopper = Audit.load(path)  # another OS process: its own copy of the file
    assert stopper is not None and stopper.finish("STOPPED", "stopped by hand")
    assert not worker.end_attempt(reply="late")  # refused: the file is final
    assert not worker.update(note="late")
    assert worker.state == "STOPPED" and worker.final
    assert json.loads(path.read_text())["state"] == "STOPPED"
    assert not worker.finish("GENERATED")  # the end stays the one on disk
