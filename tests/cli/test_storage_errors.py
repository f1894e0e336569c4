"""The file system or SQLite refusing vance's home or state: one stderr line, exit 1, JSON."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from helpers import run_cli

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


def test_an_sqlite_write_error_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state import process_store

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(process_store, "insert_process", full)
    result = run_cli(["process", "create", "--recipe", "coding", "--name", "x", "--json"])
    assert result.exit_code == EXIT_RUNTIME
    assert _one_line(result.stderr) == \
        "vance: error: state database error: database or disk is full"
    assert result.json()["error"] == "state_error"


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
