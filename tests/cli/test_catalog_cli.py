from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import build_file_tree, run_cli

from vance_cli.base.config import load_settings
from vance_cli.base.paths import bundled_dir
from vance_cli.catalog.model import load_active

BUNDLED_TEXT = (bundled_dir("catalog") / "engines.yaml").read_text(encoding="utf-8")


def catalog_with(engine: str, purpose: str = "Computes answers.") -> str:
    return BUNDLED_TEXT.rstrip("\n") + (
        f"\n  {engine}:\n    purpose: {purpose}\n    when_to_use: Deep questions.\n"
        "    not_for: Anything urgent.\n")


def test_validate_exit_codes_and_json(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(catalog_with("deep-thought"))
    ok = run_cli(["catalog", "validate", str(good)])
    assert ok.exit_code == 0 and "valid, 7 engines" in ok.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n")
    human = run_cli(["catalog", "validate", str(bad)])
    assert human.exit_code == 1 and human.stdout == ""
    assert f"{bad}:2: engines.ford.not_for: missing required key" in human.stderr
    as_json = run_cli(["catalog", "validate", str(bad), "--json"])
    assert as_json.exit_code == 1
    data = as_json.json()
    assert set(data) == {"file", "valid", "engines", "sha256", "problems", "orphans"}
    assert data["valid"] is False and data["problems"][0]["line"] == 2
    assert run_cli(["catalog", "validate", "--help"]).exit_code == 0


def test_reload_needs_a_file() -> None:
    result = run_cli(["catalog", "reload"])
    assert result.exit_code == 2 and "--file" in result.stderr and "catalog.file" in result.stderr
    both = run_cli(["catalog", "reload", "--bundled", "--file", "x.yaml"])
    assert both.exit_code == 2


def test_syntax_error_reload_keeps_previous_catalog_active(tmp_path: Path,
                                                          project_dir: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(catalog_with("deep-thought"))
    build_file_tree(project_dir, {"recipes/oracle.yaml": """
        engine: deep-thought
        description: Ask the computer.
        triggers:
          keywords: ["ask deep thought"]
    """})
    assert run_cli(["catalog", "reload", "--file", str(good)]).exit_code == 0
    broken = tmp_path / "broken.yaml"
    broken.write_text(catalog_with("deep-thought") + "  marvin: {purpose: [oops\n")
    failed = run_cli(["catalog", "reload", "--file", str(broken)])
    assert failed.exit_code == 1 and failed.stdout == ""
    assert f"{broken}:" in failed.stderr and "YAML error" in failed.stderr
    assert f"still active: {good}" in failed.stderr
    shown = run_cli(["catalog", "show", "--json"]).json()
    assert shown["source"] == str(good) and shown["warning"] is None
    assert "deep-thought" in {e["name"] for e in shown["engines"]}
    # a recipe whose engine only the previous catalog has still spawns
    created = run_cli(["process", "create", "--recipe", "oracle", "--name", "q", "--json"])
    assert created.exit_code == 0, created.stderr
    assert created.json()["engine"] == "deep-thought"
    # and a following delegate still routes to it and starts it
    delegated = run_cli(["delegate", "--task", "Ask Deep Thought for the answer", "--json"])
    assert delegated.exit_code == 0, delegated.stderr
    outcome = delegated.json()
    assert (outcome["decision"], outcome["recipe"], outcome["engine"]) == (
        "MATCH", "oracle", "deep-thought")
    assert outcome["process"]["engine"] == "deep-thought"


def test_reload_json_and_show_human(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(catalog_with("deep-thought"))
    result = run_cli(["catalog", "reload", "--file", str(good), "--json"])
    assert result.exit_code == 0
    data = result.json()
    assert data["activated"] is True and data["active"]["source"] == str(good)
    assert data["previous"]["source"] == "bundled"
    human = run_cli(["catalog", "show"])
    assert human.stderr == ""  # piped: the caption is a diagnostic, shown only on a terminal
    assert "deep-thought" in human.stdout


def test_orphaning_reload_refused_then_allowed(tmp_path: Path) -> None:
    only_ford = tmp_path / "ford.yaml"
    only_ford.write_text("engines:\n  ford:\n    purpose: p\n    when_to_use: w\n"
                         "    not_for: n\n")
    refused = run_cli(["catalog", "reload", "--file", str(only_ford)])
    assert refused.exit_code == 1
    assert "recipe 'essay-pipeline'" in refused.stderr and "--allow-orphans" in refused.stderr
    assert run_cli(["catalog", "show", "--json"]).json()["source"] == "bundled"
    allowed = run_cli(["catalog", "reload", "--file", str(only_ford), "--allow-orphans"])
    assert allowed.exit_code == 0 and "warning: recipe 'essay-pipeline'" in allowed.stderr
    spawn = run_cli(["process", "create", "--recipe", "essay-pipeline", "--name", "e"])
    assert spawn.exit_code == 2 and "unknown engine 'vogon'" in spawn.stderr
    assert run_cli(["catalog", "reload", "--bundled"]).exit_code == 0


def test_damaged_record_does_not_brick_commands(vance_home: Path) -> None:
    record = vance_home / "state" / "catalog" / "active.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"source": "/x.yaml", "engines": [')
    shown = run_cli(["catalog", "show", "--json"])
    assert shown.exit_code == 0 and shown.json()["source"] == "bundled"
    assert "damaged" in shown.json()["warning"] and "damaged" in shown.stderr
    created = run_cli(["process", "create", "--recipe", "coding", "--name", "c"])
    assert created.exit_code == 0, created.stderr


CLI_LOOP = Path(__file__).resolve().parent.parent / "workers" / "cli_loop.py"


def _loop(commands: list[list[str]]) -> subprocess.Popen[str]:
    """A separate process that runs ``vance`` once per command line, one after the other."""
    return subprocess.Popen([sys.executable, str(CLI_LOOP), json.dumps(commands)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ.copy())


def test_parallel_reloads_and_shows_never_see_a_partial_catalog(tmp_path: Path) -> None:
    # Two valid files, each with a long distinct engine so a torn read could not pass as whole.
    files = {}
    for tag in ("a", "b"):
        path = tmp_path / f"catalog-{tag}.yaml"
        path.write_text(catalog_with(f"engine-{tag}", purpose=f"Variant {tag}. " * 400))
        files[str(path)] = {"arthur", "ford", "marvin", "vogon", "zaphod", "slartibartfast",
                            f"engine-{tag}"}
    names = list(files)
    assert run_cli(["catalog", "reload", "--file", names[0]]).exit_code == 0

    paths = load_settings().paths
    stop = threading.Event()
    torn: list[str] = []
    reads = [0]

    def reader() -> None:  # an in-process reader hammering the record meanwhile
        while not stop.is_set():
            active = load_active(paths)
            reads[0] += 1
            if active.warning or active.catalog.source not in files or \
                    set(active.catalog.names) != files[active.catalog.source]:
                torn.append(repr(active))

    thread = threading.Thread(target=reader)
    thread.start()
    procs = []
    results = []
    try:  # four processes side by side, two reloading and two showing, 10 commands each
        for i in range(2):
            procs.append(("reload", _loop([["catalog", "reload", "--file", names[(i + k) % 2],
                                            "--json"] for k in range(10)])))
            procs.append(("show", _loop([["catalog", "show", "--json"]] * 10)))
        for kind, p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            results += [(kind, r["code"], r["stdout"], r["stderr"]) for r in json.loads(out)]
    finally:
        stop.set()
        thread.join()
        for _, p in procs:
            if p.poll() is None:
                p.kill()
    assert len(results) == 40
    for kind, code, out, err in results:
        assert code == 0, (kind, err)
        data = json.loads(out)
        if kind == "show":
            assert data["source"] in files and data["warning"] is None
            assert {e["name"] for e in data["engines"]} == files[data["source"]]
        else:
            assert data["activated"] is True and data["active"]["source"] in files
    assert torn == [] and reads[0] > 0
    leftovers = sorted(p.name for p in paths.catalog_state_dir.iterdir())
    assert leftovers == ["active.json", "active.lock"]


def test_relative_catalog_file_is_stored_absolute(tmp_path: Path, vance_home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    work, other = tmp_path / "ops", tmp_path / "elsewhere"
    build_file_tree(work, {"cat-good.yaml": catalog_with("deep-thought")})
    other.mkdir()
    monkeypatch.chdir(work)
    result = run_cli(["config", "set", "catalog.file", "cat-good.yaml"])
    assert result.exit_code == 0
    assert result.stderr == f"catalog.file = {work / 'cat-good.yaml'}\n"
    assert f"file: {work / 'cat-good.yaml'}" in (vance_home / "config.yaml").read_text()
    monkeypatch.chdir(other)  # README: "stored absolute", so it works from anywhere
    reloaded = run_cli(["catalog", "reload", "--json"])
    assert reloaded.exit_code == 0, reloaded.stderr
    assert load_active(load_settings().paths).catalog.source == str(work / "cat-good.yaml")
