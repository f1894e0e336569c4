"""as_vance_error: the one reading of foreign exceptions, shared by the CLI and MCP."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from vance_cli.base.errors import (
    InputError,
    StateError,
    StorageError,
    VanceError,
    as_vance_error,
)


def test_a_vance_error_is_itself() -> None:
    exc = InputError("bad")
    assert as_vance_error(exc) is exc


@pytest.mark.parametrize(("exc", "kind", "message"), [
    (PermissionError(errno.EACCES, "Permission denied", "/x/state.db"), StorageError,
     "cannot access /x/state.db: Permission denied"),
    (OSError(errno.ENOSPC, "No space left on device"), StorageError,
     "cannot write: No space left on device"),
    (sqlite3.OperationalError("database is locked"), StateError,
     "state database error: database is locked"),
    (sqlite3.DatabaseError("file is not a database"), StateError,
     "state database error: file is not a database"),
])
def test_storage_and_database_failures_become_vance_errors(
        exc: BaseException, kind: type[VanceError], message: str) -> None:
    found = as_vance_error(exc)
    assert isinstance(found, kind) and found.message == message


@pytest.mark.parametrize("exc", [
    ValueError("x"), sqlite3.IntegrityError("UNIQUE constraint failed"),
    OSError(errno.EPIPE, "Broken pipe"), KeyboardInterrupt(),
])
def test_anything_else_is_not_foreseen(exc: BaseException) -> None:
    assert as_vance_error(exc) is None
