"""Two hosts share a team's PostgreSQL: a host killed with -9 mid-turn, its turns taken over.

Each host is a ``vance worker`` in a PID namespace of its own (``unshare --pid --fork
--mount-proc --uts``, its own host name and home), so any pid check left in team mode
would look at the wrong processes and fail the test. Both use one scripted LLM server on
loopback that answers every request after 2 s. Commands run from the test's own namespace
and from third ones (``steer``, ``stop``). Nothing is timed: the takeover latency and the
LLM calls made again are printed, not asserted (docs/teams.md#takeover).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import postgres
import pytest
from helpers import REPO, run_cli, wait_until
from llm_server import RecordedRequest, ScriptedLLMServer

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(600)]

FORDS = 40
DELAY = 2.0
MARVIN_GOAL = "Prepare the relaunch of our bakery's website"
COUNCIL_GOAL = "Should our bakery open on Sundays?"
HEADS = ("economist", "baker", "customer")
APPROVE_RECIPE = (
    "engine: vogon\ndescription: Draft a notice, have it approved, publish it.\nparams:\n"
    "  phases:\n    - name: draft\n      prompt: Write the draft.\n"
    "      input: 'Draft the notice: {{ task }}'\n"
    "      checkpoint: {type: approval, message: Is the draft right?}\n"
    "    - name: publish\n      prompt: Publish it.\n"
    "      input: 'Publish this notice: {{ phases.draft }}'\n")


def _unshare_works() -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--uts", "true"],
                           capture_output=True, check=False)
    return probe.returncode == 0


if not _unshare_works():
    pytestmark.append(pytest.mark.skip(
        reason="needs root and unshare --pid --fork --mount-proc --uts (PID namespaces)"))


def _user(req: RecordedRequest) -> str:
    return "\n".join(str(m.get("content") or "") for m in req.json["messages"]
                     if m["role"] == "user")


def _system(req: RecordedRequest) -> str:
    return "\n".join(str(m.get("content") or "") for m in req.json["messages"]
                     if m["role"] == "system")


def _from_a(req: RecordedRequest) -> bool:
    return req.headers.get("authorization") == "Bearer key-host-a"


def _script(llm: ScriptedLLMServer, hold: threading.Event) -> None:
    """Two replies for every call (a call cut off by the kill is made again), 2 s each.

    Host A's first answers to the heads and to marvin's first task wait for ``hold`` (told
    apart by its API key): host A dies while it runs them.
    """
    for copy in range(2):
        for n in range(FORDS):
            llm.reply(f"ANSWER-{n:02d}", delay=DELAY, chunks=4,
                      when=lambda r, n=n: f"Question Q{n:02d}:" in _user(r))
        llm.reply(json.dumps({"heads": [{"name": h, "persona": f"a {h} who cares"}
                                        for h in HEADS]}), delay=DELAY,
                  when=lambda r: "You convene a council" in _system(r))
        for head in HEADS:
            llm.reply(f"VIEW-{head}", delay=DELAY, gate=hold if copy == 0 else None,
                      when=lambda r, h=head, c=copy: f"You are {h}:" in _user(r)
                      and (c > 0 or _from_a(r)))
        llm.reply("SYNTHESIS", delay=DELAY, chunks=4,
                  when=lambda r: "The heads' answers" in _user(r))
        llm.reply(json.dumps({"goal": "Relaunch", "tasks": [
            {"goal": f"Task T{k}: write part {k} of the site", "recipe": "default"}
            for k in range(1, 5)]}), delay=DELAY, when=lambda r: _user(r) == MARVIN_GOAL)
        for k in range(1, 5):
            held = copy == 0 and k == 1
            llm.reply(f"PART-{k}", delay=DELAY, gate=hold if held else None,
                      when=lambda r, k=k, held=held: f"Task T{k}:" in _user(r)
                      and not _user(r).startswith("Goal:") and (not held or _from_a(r)))
        llm.reply("MARVIN DONE", delay=DELAY,
                  when=lambda r: _user(r).startswith("Goal:") and "PART-1" in _user(r))
        llm.reply("DRAFT-NOTICE", delay=DELAY, when=lambda r: "Draft the notice:" in _user(r))
        llm.reply("PUBLISHED", delay=DELAY, when=lambda r: "Publish this notice:" in _user(r))
    llm.reply("LONG " * 80, chunks=80, chunk_delay=0.5,  # the turn stopped from elsewhere
              when=lambda r: "Question HOLD:" in _user(r))


def _home(root: Path, name: str) -> Path:
    home = root / name
    recipes = home / "data" / "tenants" / "default" / "projects" / "_tenant" / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "approve-publish.yaml").write_text(APPROVE_RECIPE, encoding="utf-8")
    return home


def _env(home: Path, url: str, llm: ScriptedLLMServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VANCE_")}
    env.update(llm.env(api_key=f"key-{home.name}", timeout=60, combine=None))
    env.update({"VANCE_HOME": str(home), "VANCE_STATE_URL": url,
                "VANCE_HEARTBEAT_INTERVAL": "0.5", "VANCE_STALE_TIMEOUT": "4",
                "PYTHONPATH": str(REPO)})
    return env


@contextmanager
def _host(name: str, home: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A host: ``vance worker`` in PID and UTS namespaces of its own, its own session."""
    log = open(home / "worker.log", "wb")
    command = ["unshare", "--pid", "--fork", "--mount-proc", "--uts", "sh", "-c",
               f'hostname {name} && exec "$0" -m vance_cli worker --concurrency 12',
               sys.executable]
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        log.close()


def _elsewhere(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``vance ARGS`` in a third PID namespace."""
    return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m",
                           "vance_cli", *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def _rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())  # type: ignore[arg-type]


def _create(env: dict[str, str], recipe: str, goal: str) -> str:
    result = run_cli(["process", "create", "--recipe", recipe, "--goal", goal, "--json"],
                     env=env)
    assert result.exit_code == 0, result.stderr
    return str(result.json()["id"])


def test_two_hosts_take_over_a_killed_hosts_turns_and_settle_each_once(
        tmp_path: Path) -> None:
    with ExitStack() as stack:
        url = stack.enter_context(postgres.fresh_database())
        llm = ScriptedLLMServer().start()
        stack.callback(llm.stop)
        hold = threading.Event()
        stack.callback(hold.set)
        _script(llm, hold)
        envs = {name: _env(_home(tmp_path, name), url, llm)
                for name in ("host-a", "host-b", "cli")}
        host_a = stack.enter_context(_host("host-a", tmp_path / "host-a", envs["host-a"]))
        cli = envs["cli"]
        # the orchestrators first, on A alone: their turns and their children's run there
        council = _create(cli, "council-three-perspectives", COUNCIL_GOAL)
        marvin = _create(cli, "marvin", MARVIN_GOAL)
        vogon = _create(cli, "approve-publish", "we open on Sundays from May")
        assert wait_until(lambda: _running_on_a(url, council) >= 2
                          and _running_on_a(url, marvin) >= 2, timeout=120), \
            "the council's heads and marvin's first task never ran on host A"
        stack.enter_context(_host("host-b", tmp_path / "host-b", envs["host-b"]))
        fords = [_create(cli, "quick-lookup", f"Question Q{n:02d}: what is {n} squared?")
                 for n in range(FORDS)]

        # kill -9 host A while turns run on it: the orchestrators, children, fords
        assert wait_until(lambda: len(_rows(
            url, "SELECT id FROM processes WHERE status = 'RUNNING' AND worker LIKE"
            " 'host-a:%%' AND recipe = 'quick-lookup'")) >= 2
            and _running_on_a(url, council) >= 2, timeout=120), \
            "host A never ran two fords beside the council"
        on_a = {r[0] for r in _rows(url, "SELECT id FROM processes WHERE status = 'RUNNING'"
                                          " AND worker LIKE 'host-a:%%'")}
        os.killpg(host_a.pid, signal.SIGKILL)
        killed_at = time.time()
        host_a.wait(30)
        hold.set()  # the held answers go to connections that died with A

        # the checkpoint: answered by steer from a third namespace, settles on B
        assert wait_until(lambda: _status(url, vogon) == "BLOCKED", timeout=240), \
            _status(url, vogon)
        steer = _elsewhere(["process", "steer", vogon, "yes"], cli)
        assert steer.returncode == 0, steer.stderr

        everyone = [*fords, council, marvin, vogon]
        wait_until(lambda: all(_status(url, p) in ("IDLE", "CLOSED/DONE") for p in everyone)
                   or any(_status(url, p).startswith("CLOSED/") and _status(url, p) !=
                          "CLOSED/DONE" for p in everyone), timeout=400)
        assert all(_status(url, p) in ("IDLE", "CLOSED/DONE") for p in everyone), _why(url)

        # process stop from another namespace stops a turn that runs on B
        held = _create(cli, "quick-lookup", "Question HOLD: tell me a long story")
        assert wait_until(lambda: _status(url, held) == "RUNNING", timeout=60)
        stop = _elsewhere(["process", "stop", held], cli)
        assert stop.returncode == 0, stop.stderr
        assert _status(url, held) == "CLOSED/STOPPED"
        assert wait_until(lambda: not _rows(url, "SELECT id FROM procrastinate_jobs WHERE"
                                                 " lock = %s AND status = 'doing'", held),
                          timeout=60), "the stopped turn's job still runs on B"

        # nothing ended STALE; every turn that ran on A settled on B
        stale = _rows(url, "SELECT id, outcome FROM processes WHERE close_reason = 'STALE'")
        assert stale == []
        taken = _rows(url, "SELECT process_id, at FROM process_transitions WHERE note LIKE"
                           " %s", "%taken over by host-b:%")
        taken_ids = {r[0] for r in taken}
        assert on_a <= taken_ids | _closed_children(url, on_a), (on_a, taken_ids)
        workers = _rows(url, "SELECT DISTINCT worker FROM processes WHERE id = ANY(%s)",
                        list(on_a))
        assert all(w[0] is None or w[0].startswith("host-b:") for w in workers), workers

        # every input consumed by exactly one turn; each (process, turn) settled once
        for pid in everyone:
            inputs = _rows(url, "SELECT id, turn FROM messages WHERE process_id = %s AND"
                                " role = 'user'", pid)
            assert inputs and all(turn is not None for _, turn in inputs), (pid, inputs)
            turns = _rows(url, "SELECT number, outcome FROM turns WHERE process_id = %s"
                               " ORDER BY number", pid)
            settled = [n for n, outcome in turns if outcome not in ("STALE",)]
            assert all(outcome != "RUNNING" for _, outcome in turns), turns
            consumed = {turn for _, turn in inputs}
            assert consumed <= set(settled), (pid, consumed, turns)
            settles = _rows(url, "SELECT note FROM process_transitions WHERE process_id = %s"
                                 " AND from_status = 'RUNNING' AND to_status <> 'RUNNING'", pid)
            per_turn = [note for (note,) in settles if note and note.startswith("turn ")]
            assert len(per_turn) == len(set(per_turn)), (pid, per_turn)

        # the council: each head settled once, one synthesis; no duplicate children
        heads = _rows(url, "SELECT id, status, close_reason FROM processes WHERE"
                           " parent_process_id = %s", council)
        assert len(heads) == len(HEADS) and {(s, c) for _, s, c in heads} == {("CLOSED", "DONE")}
        for head, _, _ in heads:
            closes = _rows(url, "SELECT count(*) FROM process_transitions WHERE process_id = %s"
                                " AND to_status = 'CLOSED'", head)
            assert closes == [(1,)], (head, closes)
        replies = _rows(url, "SELECT content FROM messages WHERE process_id = %s AND"
                             " role = 'assistant' AND kind = 'reply'", council)
        assert replies == [("SYNTHESIS",)]
        tasks = _rows(url, "SELECT count(*) FROM processes WHERE parent_process_id = %s",
                      marvin)
        assert tasks == [(4,)]
        assert _rows(url, "SELECT result FROM processes WHERE id = %s", marvin) == \
            [("MARVIN DONE",)]
        assert _rows(url, "SELECT result FROM processes WHERE id = %s", vogon) == \
            [("PUBLISHED",)]

        # the figures the issue asks for (printed, never asserted)
        latencies = sorted(float(_at(at)) - killed_at for _, at in taken)
        again = _rows(url, "SELECT count(*) FROM llm_calls WHERE attempt > 1")[0][0]
        cut = _rows(url, "SELECT count(*) FROM llm_calls WHERE error LIKE 'cut off%%'")[0][0]
        kinds = sorted(r[0] for r in _rows(url, "SELECT recipe FROM processes WHERE id = ANY(%s)",
                                           list(on_a)))
        print(f"\nturns running on host A when killed: {len(on_a)} ({', '.join(kinds)});"
              f" taken over: {len(taken)};"
              f" takeover latency after kill -9 (s): min {latencies[0]:.1f},"
              f" max {latencies[-1]:.1f}; LLM calls made again (attempt > 1): {again};"
              f" calls cut off by the kill: {cut}")


def _running_on_a(url: str, parent: str) -> int:
    """Return how many of ``parent`` and its children run on host A."""
    rows = _rows(url, "SELECT count(*) FROM processes WHERE (id = %s OR parent_process_id = %s)"
                      " AND status = 'RUNNING' AND worker LIKE 'host-a:%%'", parent, parent)
    return int(rows[0][0])


def _why(url: str) -> list[Any]:
    """The processes not settled as they should be: recipe, status, outcome, their trail."""
    rows = _rows(url, "SELECT id, recipe, status, close_reason, outcome, worker, takeovers,"
                      " parent_process_id FROM processes WHERE NOT (status = 'IDLE' OR"
                      " COALESCE(close_reason, '') = 'DONE')")
    return [(row, _rows(url, "SELECT from_status, to_status, note FROM process_transitions"
                             " WHERE process_id = %s ORDER BY id", row[0])) for row in rows]


def _status(url: str, pid: str) -> str:
    [(status, reason)] = _rows(url, "SELECT status, close_reason FROM processes WHERE id = %s",
                               pid)
    return f"{status}/{reason}" if reason else str(status)


def _closed_children(url: str, ids: set[str]) -> set[str]:
    """Children that ran on A inline-free and closed before the takeover reached them."""
    rows = _rows(url, "SELECT id FROM processes WHERE id = ANY(%s) AND status = 'CLOSED'"
                      " AND parent_process_id IS NOT NULL", list(ids))
    return {r[0] for r in rows}


def _at(text: str) -> float:
    from vance_cli.base.clock import parse_time

    return parse_time(text).timestamp()
