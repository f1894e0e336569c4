"""SQLite's failures as vance errors naming the database (docs/exit-codes.md)."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pytest

from vance_cli.base.errors import DatabaseLocked, StateError, StorageError
from vance_cli.state import db_errors
from vance_cli.state.db import Database
from vance_cli.state.db_errors import database_error

pytestmark = pytest.mark.sqlite_only  # SQLite's own failures, on files the tests make


def _raised(conn: sqlite3.Connection, sql: str) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as info:
        conn.execute(sql)
    return info.value


def test_a_full_database_is_a_storage_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "v.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE t (x)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL
    exc = _raised(conn, f"INSERT INTO t VALUES ('{'x' * 100_000}')")
    found = database_error(exc, path)
    assert isinstance(found, StorageError)
    assert found.to_json() == {"error": "storage_error", "message": f"cannot write {path}: "
                               "database or disk is full", "path": str(path), "errno": "ENOSPC"}


def test_a_lock_held_past_the_wait_names_the_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.state import db as state_db

    path = tmp_path / "v.db"
    Database.open(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(state_db, "BUSY_TIMEOUT_MS", 100)
    db = Database.open(path)
    try:
        with pytest.raises(DatabaseLocked) as info, db.transaction():
            pass
    finally:
        holder.rollback()
        db.close()
    assert info.value.message == \
        f"state database {path}: database is locked (another process holds its lock)"
    assert isinstance(info.value, StateError) and info.value.details == {"path": str(path)}


def test_a_disk_i_o_error_on_a_full_disk_says_so(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # What SQLite raises when the WAL index cannot grow on a full disk; the probe's write
    # then fails with ENOSPC as on that disk (os.write is the call that meets it).
    exc = sqlite3.OperationalError("disk I/O error")
    exc.sqlite_errorcode = sqlite3.SQLITE_IOERR_SHMSIZE  # type: ignore[attr-defined]
    path = tmp_path / "v.db"
    path.write_bytes(b"")

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(db_errors.os, "write", full)
    found = database_error(exc, path)
    assert isinstance(found, StorageError)
    assert found.message == f"cannot write {path}: disk I/O error (No space left on device)"
    assert found.details == {"path": str(path), "errno": "ENOSPC"}
    assert list(tmp_path.glob(".vance-probe-*")) == []  # the probe left nothing


def test_a_disk_i_o_error_the_probe_cannot_explain_is_a_state_error(tmp_path: Path) -> None:
    exc = sqlite3.OperationalError("disk I/O error")
    exc.sqlite_errorcode = sqlite3.SQLITE_IOERR  # type: ignore[attr-defined]
    found = database_error(exc, tmp_path / "v.db")
    assert type(found) is StateError
    assert found.message == f"state database {tmp_path / 'v.db'}: disk I/O error"


@pytest.mark.parametrize("exc", [
    sqlite3.IntegrityError("UNIQUE constraint failed: processes.name"),
    sqlite3.ProgrammingError("Cannot operate on a closed database."),
    ValueError("not SQLite"),
])
def test_errors_that_mean_a_bug_stay_as_they_are(tmp_path: Path, exc: Exception) -> None:
    assert database_error(exc, tmp_path / "v.db") is None
