"""audit.json: rewritten whole at each change, frozen once final."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from vance_cli.slart.audit import Audit, layer_path, run_folder


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
