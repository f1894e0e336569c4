"""The file system or SQLite refusing vance's home or state: one stderr line, exit 1, JSON."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run_cli
from llm_server import ScriptedLLMServer

from vance_cli.base.errors import EXIT_RUNTIME

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "--debug" not in stderr
    return lines[0]


@pytest.mark.parametrize(("make", "problem"), [
    (lambda db: db.mkdir(parents=True), "it is a folder, not a database file"),
    (lambda db: db.write_bytes(b"no sqlite file, just text" * 10), "file is not a database"),
    # SQLite itself takes a one-byte file for an empty database and writes over it
    (lambda db: db.write_bytes(b"x"), "file is not a database"),
])
def test_a_bad_database_path_is_one_line_and_exit_1(  # type: ignore[no-untyped-def]
        vance_home: Path, make, problem: str) -> None:
    db = vance_home / "state" / "vance.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    make(db)
    result = run_cli(["process", "list"])
    assert result.exit_code == EXIT_RUNTIME
    assert _one_line(result.stderr) == f"vance: error: cannot open state database {db}: {problem}"
    data = run_cli(["process", "list", "--json"]).json()
    assert (data["error"], data["path"]) == ("state_error", str(db))
    assert problem in data["message"]
    assert db.is_dir() or db.stat().st_size <= 250, "the file was written over"


@pytest.mark.skipif(ROOT, reason="root ignores file permissions")
def test_a_read_only_home_folder_is_permission_denied(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        env = {"VANCE_HOME": str(locked / "home")}
        result = run_cli(["process", "list"], env=env)
        assert result.exit_code == EXIT_RUNTIME
        line = _one_line(result.stderr)
        assert line.startswith(f"vance: error: cannot write {locked / 'home'}")
        assert line.endswith(": Permission denied")
        data = run_cli(["process", "list", "--json"], env=env).json()
        assert (data["error"], data["errno"]) == ("storage_error", "EACCES")
    finally:
        locked.chmod(stat.S_IRWXU)


@pytest.mark.skipif(ROOT, reason="root ignores file permissions")
def test_a_read_only_config_folder_keeps_the_old_file(vance_home: Path) -> None:
    assert run_cli(["config", "set", "llm.model", "old"]).exit_code == 0
    vance_home.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        result = run_cli(["config", "set", "llm.model", "new"])
    finally:
        vance_home.chmod(stat.S_IRWXU)
    assert result.exit_code == EXIT_RUNTIME
    line = _one_line(result.stderr)
    assert str(vance_home) in line and line.endswith(": Permission denied")
    assert "old" in (vance_home / "config.yaml").read_text()


@pytest.mark.parametrize(("code", "reason"), [
    (errno.EROFS, "Read-only file system"),
    (errno.EACCES, "Permission denied"),
    (errno.ENOSPC, "No space left on device"),
])
def test_os_errors_creating_the_state_folder(vance_home: Path, monkeypatch: pytest.MonkeyPatch,
                                             code: int, reason: str) -> None:
    # Works as root too: the OS error is what a read-only mount or a full disk raises.
    real_mkdir = Path.mkdir

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        if self.name == "state":
            raise OSError(code, os.strerror(code), str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", refuse)
    result = run_cli(["process", "list", "--json"])
    assert result.exit_code == EXIT_RUNTIME
    assert _one_line(result.stderr) == \
        f"vance: error: cannot write {vance_home / 'state'}: {reason}"
    data = result.json()
    assert data["error"] == "storage_error" and data["path"] == str(vance_home / "state")
    assert data["errno"] == errno.errorcode[code]


def test_a_full_disk_while_writing_the_config_keeps_the_old_file(
        vance_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_cli(["config", "set", "llm.model", "old"]).exit_code == 0

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # fsync names no file

    monkeypatch.setattr(os, "fsync", full)
    result = run_cli(["config", "set", "llm.model", "new"])
    assert result.exit_code == EXIT_RUNTIME
    config = vance_home / "config.yaml"
    assert _one_line(result.stderr) == \
        f"vance: error: cannot write {config}: No space left on device"
    assert "old" in config.read_text()
    assert [p.name for p in vance_home.iterdir() if p.name.endswith(".tmp")] == []


def test_an_sqlite_write_error_is_one_line_naming_the_database(
        vance_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state import process_store

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(process_store, "insert_process", full)
    result = run_cli(["process", "create", "--recipe", "coding", "--name", "x", "--json"])
    assert result.exit_code == EXIT_RUNTIME
    db = vance_home / "state" / "vance.db"
    assert _one_line(result.stderr) == \
        f"vance: error: state database {db}: database or disk is full"
    assert (result.json()["error"], result.json()["path"]) == ("state_error", str(db))


def test_an_unexpected_os_error_is_still_a_bug_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state import process_store

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(process_store, "insert_process", broken)
    result = run_cli(["process", "create", "--recipe", "coding", "--name", "x"])
    assert result.exit_code == EXIT_RUNTIME
    assert "OSError" in result.stderr and "--debug" in result.stderr


def _loop(tmp: Path) -> Path:
    (tmp / "loop1").symlink_to(tmp / "loop2")
    (tmp / "loop2").symlink_to(tmp / "loop1")
    return tmp / "loop1"


@pytest.mark.parametrize(("make", "code", "reason"), [
    (lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile", "ENOTDIR",
     "Not a directory"),
    (_loop, "ELOOP", "Too many levels of symbolic links"),
    (lambda tmp: tmp / ("x" * 300), "ENAMETOOLONG", "File name too long"),
])
def test_a_home_the_file_system_cannot_hold_is_one_line_and_json(  # type: ignore[no-untyped-def]
        tmp_path: Path, make, code: str, reason: str) -> None:
    env = {"VANCE_HOME": str(make(tmp_path))}
    result = run_cli(["delegate", "--task", "Write a short essay about tea", "--json"], env=env)
    assert result.exit_code == EXIT_RUNTIME
    line = _one_line(result.stderr)
    assert line.startswith("vance: error: cannot ") and line.endswith(f": {reason}")
    data = result.json()
    assert (data["error"], data["errno"]) == ("storage_error", code)


def test_an_unforeseen_error_is_json_with_json(monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.cli.commands import process as processes

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(processes, "list_processes", broken)
    result = run_cli(["process", "list", "--json"])
    assert result.exit_code == EXIT_RUNTIME
    assert result.json() == {"error": "unexpected_error", "message": "ZeroDivisionError: a bug"}
    assert result.stderr.strip() == ("vance: error: ZeroDivisionError: a bug "
                                     "(run with --debug for the traceback)")


def test_a_refused_temporary_file_names_the_file_being_written(
        vance_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    assert run_cli(["config", "set", "llm.model", "old"]).exit_code == 0

    def refuse(*_args: object, prefix: str = "", dir: str = "", **_kwargs: object) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES),
                              os.path.join(dir, f"{prefix}x1y2.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    result = run_cli(["config", "set", "llm.model", "new"])
    assert result.exit_code == EXIT_RUNTIME
    config = vance_home / "config.yaml"
    assert _one_line(result.stderr) == f"vance: error: cannot write {config}: Permission denied"
    assert "old" in config.read_text()


def test_a_full_disk_under_the_state_database_names_the_file(
        vance_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state.db import Database

    assert run_cli(["process", "create", "--recipe", "coding", "--name", "a"]).exit_code == 0
    real_open = Database.open

    def full(path: Path) -> Database:  # SQLite's own SQLITE_FULL: no page may be added
        db = real_open(path)
        pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
        db.conn.execute(f"PRAGMA max_page_count = {pages}")
        return db

    monkeypatch.setattr(Database, "open", staticmethod(full))
    names = [f"x{i}-" + "y" * 150 for i in range(40)]
    results = [run_cli(["process", "create", "--recipe", "coding", "--name", n, "--json",
                        "--steer", "s" * 4000]) for n in names]
    failed = [r for r in results if r.exit_code != 0]
    assert failed, "the database never filled up"
    db = vance_home / "state" / "vance.db"
    assert _one_line(failed[0].stderr) == \
        f"vance: error: cannot write {db}: database or disk is full"
    assert failed[0].json() == {"error": "storage_error", "message": f"cannot write {db}: "
                                "database or disk is full", "path": str(db), "errno": "ENOSPC"}


def test_leftover_temporary_files_are_removed_by_the_next_write(vance_home: Path) -> None:
    import time

    assert run_cli(["config", "set", "llm.model", "old"]).exit_code == 0
    dead = vance_home / ".config.yaml.99999999.k3y5.tmp"  # a writer killed before its rename
    unnamed = vance_home / ".config.yaml.abc123.tmp"      # an old one without a pid
    live = vance_home / f".config.yaml.{os.getppid()}.w1p.tmp"  # a writer still at work
    for leftover in (dead, unnamed, live):
        leftover.write_text("llm:\n  api_key: sk-secret\n")
    hour_ago = time.time() - 3600
    os.utime(unnamed, (hour_ago, hour_ago))
    assert run_cli(["config", "set", "llm.model", "new"]).exit_code == 0
    assert sorted(p.name for p in vance_home.glob(".config.yaml.*")) == [live.name]


def test_a_locked_database_names_its_file(vance_home: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state import db as state_db

    assert run_cli(["process", "create", "--recipe", "coding", "--name", "a"]).exit_code == 0
    db = vance_home / "state" / "vance.db"
    holder = sqlite3.connect(db, isolation_level=None)  # another process's writer, mid-write
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(state_db, "BUSY_TIMEOUT_MS", 200)  # not 30 s of waiting
    try:
        result = run_cli(["process", "create", "--recipe", "coding", "--name", "b", "--json"])
        listed = run_cli(["process", "list"])  # readers never wait for a writer (WAL)
    finally:
        holder.rollback()
        holder.close()
    assert result.exit_code == EXIT_RUNTIME
    assert _one_line(result.stderr) == (f"vance: error: state database {db}: database is "
                                        "locked (another process holds its lock)")
    assert (result.json()["error"], result.json()["path"]) == ("state_error", str(db))
    assert listed.exit_code == 0 and "\ta\t" in listed.stdout


FILE_SIZE_LIMIT = 8 * 1024
"""RLIMIT_FSIZE for the full-disk test: the kernel refuses to grow any file past it (EFBIG),
and SQLite reports that as "disk I/O error", as it does a full disk creating its WAL index."""


def _vance_with_file_size_limit(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no .pyc cut at the limit
    return subprocess.run([sys.executable, "-m", "vance_cli", "--home", str(home), *args],
                          capture_output=True, text=True, preexec_fn=limit, check=False,
                          timeout=60, env=env)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
def test_a_disk_that_cannot_grow_a_file_lets_list_read_and_create_names_the_file(
        vance_home: Path) -> None:
    assert run_cli(["process", "create", "--recipe", "coding", "--name", "a"]).exit_code == 0
    db = vance_home / "state" / "vance.db"
    listed = _vance_with_file_size_limit(["process", "list"], vance_home)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert "\ta\tcoding\t" in listed.stdout
    created = _vance_with_file_size_limit(
        ["process", "create", "--recipe", "coding", "--name", "b", "--json"], vance_home)
    assert created.returncode == EXIT_RUNTIME
    assert _one_line(created.stderr) == \
        f"vance: error: cannot write {db}: disk I/O error (File too large)"
    data = json.loads(created.stdout)
    assert (data["error"], data["path"], data["errno"]) == ("storage_error", str(db), "EFBIG")
    assert run_cli(["process", "list", "--json"]).json()[0]["name"] == "a"  # nothing written


def _immutable(root: Path, on: bool) -> None:
    """``chattr -R +i`` (or ``-i``): as root the one way to make a folder refuse writes."""
    subprocess.run(["chattr", "-R", "+i" if on else "-i", str(root)], check=True,
                   capture_output=True)


@pytest.fixture
def read_only_home(vance_home: Path) -> Iterator[Path]:
    """The home, with a state database, made read-only as a real home can be.

    Root ignores file modes, so as root the files are made immutable (``chattr +i``:
    every open for writing and every new file fails with EPERM, as on a read-only
    mount); otherwise the modes lose their write bits (EACCES).
    """
    assert run_cli(["process", "create", "--recipe", "coding", "--name", "a"]).exit_code == 0
    assert run_cli(["delegate", "--task", "Write a short essay about tea"]).exit_code == 0
    if ROOT:
        if shutil.which("chattr") is None:
            pytest.skip("chattr is needed to make a home read-only as root")
        try:
            _immutable(vance_home, True)
        except subprocess.CalledProcessError:
            pytest.skip("this file system has no immutable flag")
        try:
            yield vance_home
        finally:
            _immutable(vance_home, False)
        return
    modes = {p: p.stat().st_mode for p in [vance_home, *vance_home.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield vance_home
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


@pytest.mark.parametrize(("args", "shows"), [
    (["process", "list"], "\ta\tcoding\tford\tIDLE\t"),
    (["process", "show", "a"], "title: Write or change code"),
    (["log"], "essay"),
    (["recipe", "list"], "coding\tford\tRESOURCE"),
    (["config", "show"], "budget.max_tokens\t5000000\tdefault"),
    (["catalog", "show"], "slartibartfast\t"),
])
def test_read_commands_work_on_a_read_only_home(read_only_home: Path, args: list[str],
                                                shows: str) -> None:
    result = run_cli(args)
    assert (result.exit_code, result.stderr) == (0, "")
    assert shows in result.stdout


@pytest.mark.parametrize("args", [
    ["process", "create", "--recipe", "coding", "--name", "b"],
    ["process", "stop", "a"],
    ["delegate", "--task", "Write a short essay about coffee"],
])
def test_write_commands_say_the_home_is_read_only(read_only_home: Path,
                                                  args: list[str]) -> None:
    db = read_only_home / "state" / "vance.db"
    result = run_cli([*args, "--json"])
    assert result.exit_code == EXIT_RUNTIME
    reason = "Operation not permitted" if ROOT else "Permission denied"
    assert _one_line(result.stderr) == \
        f"vance: error: cannot write {db}: the home is read-only ({reason})"
    data = result.json()
    assert (data["error"], data["path"], data["errno"]) == (
        "storage_error", str(db), "EPERM" if ROOT else "EACCES")


def test_a_read_only_database_that_needs_an_upgrade_says_why_it_cannot_be_read(
        vance_home: Path) -> None:
    assert run_cli(["process", "create", "--recipe", "coding", "--name", "a"]).exit_code == 0
    db = vance_home / "state" / "vance.db"
    with sqlite3.connect(db) as conn:  # as an older vance left it
        conn.execute("DELETE FROM migrations WHERE name = 'm008_wizard_uses'")
    conn.close()
    if not ROOT:
        pytest.skip("needs chattr (root)")
    _immutable(vance_home, True)
    try:
        result = run_cli(["process", "list"])
    finally:
        _immutable(vance_home, False)
    assert result.exit_code == EXIT_RUNTIME
    assert _one_line(result.stderr) == (
        f"vance: error: cannot write {db}: the home is read-only (Operation not permitted);"
        " it cannot be read either: it needs the upgrade m008_wizard_uses, which writes")


@pytest.mark.parametrize("replies_folder", ["writable", "a file"])
def test_a_reply_the_database_refuses_is_kept_in_a_file_that_is_named(
        vance_home: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path, replies_folder: str) -> None:
    # The turn runs here as a worker runs it (runtime.run_turn). The database is full as on
    # a full disk (SQLITE_FULL): it may grow by a few pages, enough for the small writes of
    # the turn's start and its failure, not for the reply's 60 kB.
    import tempfile

    from vance_cli.state.db import Database

    assert run_cli(["process", "create", "--recipe", "coding", "--name", "a",
                    "--steer", "Explain WAL mode"]).exit_code == 0  # no LLM yet: it waits
    process_id = run_cli(["process", "show", "a", "--json"]).json()["id"]
    for key, value in llm_server.env(api_key="sk-test").items():
        monkeypatch.setenv(key, value)
    reply = "WAL keeps a log beside the database. " * 1700
    llm_server.reply(reply)
    real_open = Database.open

    def nearly_full(path: Path) -> Database:
        db = real_open(path)
        pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
        db.conn.execute(f"PRAGMA max_page_count = {pages + 8}")
        return db

    monkeypatch.setattr(Database, "open", staticmethod(nearly_full))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    replies = vance_home / "state" / "replies"
    if replies_folder == "a file":  # a file where the folder must be: ENOTDIR, the temp dir
        replies.write_text("in the way")
        kept = tmp_path / "tmp" / "vance-replies" / f"{process_id}-1.unsaved.txt"
    else:
        kept = replies / f"{process_id}-1.unsaved.txt"
    result = run_cli(["process", "run", "a", "--json"])
    db = vance_home / "state" / "vance.db"
    reason = (f"the reply of turn 1 could not be saved (cannot write {db}: database or disk "
              f"is full); it is kept in {kept}")
    assert kept.read_text() == reply
    assert f"vance: warning: process {process_id}: {reason}" in result.stderr.splitlines()
    assert result.exit_code == EXIT_RUNTIME
    shown = run_cli(["process", "show", "a", "--json"]).json()
    assert (shown["status"], shown["closeReason"]) == ("CLOSED", "STALE")
    assert shown["outcome"]["reason"] == reason


def test_the_reaper_names_a_kept_reply_it_finds(vance_home: Path) -> None:
    from vance_cli.base.config import load_settings
    from vance_cli.processes.overflow import unsaved_note
    from vance_cli.workspace import Workspace

    ws = Workspace(load_settings())
    replies = vance_home / "state" / "replies"
    replies.mkdir(parents=True)
    (replies / "abc-2.unsaved.txt").write_text("the reply")
    (replies / "abcd-1.unsaved.txt").write_text("another process's")
    assert unsaved_note(ws, "abc") == \
        f"; the reply of turn 2 is kept in {replies / 'abc-2.unsaved.txt'}"
    assert unsaved_note(ws, "zzz") == ""
