"""The VanceError tree: every error vance raises on purpose.

Invariants:
- Every class carries a stable snake_case ``code`` (for ``--json`` error
  output and tests) and an ``exit_code``: 2 for bad input or usage, 1 for a
  runtime failure (docs/exit-codes.md).
- Exceptions carry data (names, paths, close matches, field paths), never
  terminal formatting, and never print. ``cli/boundary.py`` is the one place
  that turns them into a stderr line and an exit code.
- Where a builtin fits, a class also inherits it (``LookupError`` for
  missing things, ``ValueError`` for bad values), so callers can catch
  either.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

EXIT_OK = 0
"""Success, including a selector ``NONE`` (docs/exit-codes.md)."""
EXIT_RUNTIME = 1
"""A runtime failure (network, disk, a catalog that fails to reload)."""
EXIT_USAGE = 2
"""Bad flags or invalid input: failed validation, unknown wizard or recipe."""
EXIT_NO_MATCH = 3
"""``vance delegate --require-match`` got ``NONE`` (docs/exit-codes.md)."""
EXIT_NO_TURN = 75
"""``--wait`` or ``vance process wait``: no turn could run, the input waits (no LLM, a closed
process); as sysexits' EX_TEMPFAIL, "try again later" (docs/exit-codes.md)."""
EXIT_TIMEOUT = 124
"""``vance process wait`` timed out (as coreutils' ``timeout``)."""
EXIT_INTERRUPTED = 130
"""Cancelled with Ctrl-C or Ctrl-D (128 + SIGINT)."""


class VanceError(Exception):
    """Root of every error vance raises on purpose.

    Args:
        message: one line for a person, without terminal markup.
        **details: structured data for ``--json`` output and tests.
    """

    code: ClassVar[str] = "vance_error"
    exit_code: ClassVar[int] = EXIT_RUNTIME

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def to_json(self) -> dict[str, Any]:
        """Return ``{"error": code, "message": ..., **details}`` for ``--json`` output."""
        return {"error": self.code, "message": self.message, **self.details}


class InputError(VanceError, ValueError):
    """Invalid input or usage: exit 2."""

    code = "invalid_input"
    exit_code = EXIT_USAGE


class InvalidDocumentName(InputError):
    """A document name with ``..``, an absolute path, an empty segment or a bad character.

    Rule: docs/documents.md, last bullet.
    """

    code = "invalid_document_name"


class InvalidId(InputError):
    """A tenant, project, user or session id that cannot be one path segment.

    Rule: docs/documents.md (ids become folders: ``tenants/<tenant>/projects/<project>``).

    Args:
        message: what is wrong, one line.
        **details: ``kind`` (``"tenant"`` …) and ``value`` (the id as given).
    """

    code = "invalid_id"


class PathNotFound(InputError):
    """A file or folder given to vance (an argument, an option, ``catalog.file``) does not exist.

    One rule for every command: exit 2, ``<what> <path>: no such file or folder``
    (docs/exit-codes.md).

    Args:
        path: the path as given.
        what: what it was meant to be, e.g. ``"catalog file"``; "" for a plain path.
    """

    code = "path_not_found"

    def __init__(self, path: str, what: str = "") -> None:
        prefix = f"{what} " if what else ""
        super().__init__(f"{prefix}{path}: no such file or folder", path=path)


def require_path(path: str | os.PathLike[str], what: str = "") -> None:
    """Raise ``PathNotFound`` when nothing exists at ``path`` (a dangling link counts as nothing).

    Raises:
        PathNotFound: as its docstring says.
    """
    if not os.path.exists(path):
        raise PathNotFound(os.fspath(path), what)


class NotFoundError(InputError, LookupError):
    """A named thing (recipe, wizard, process, engine …) does not exist: exit 2.

    Args:
        kind: what was looked up, e.g. ``"recipe"``.
        name: the name asked for.
        close: up to 5 close names, best first ("did you mean").
        available: every name that would have been accepted (may be long).
    """

    code = "not_found"

    def __init__(
        self,
        kind: str,
        name: str,
        close: Sequence[str] = (),
        available: Sequence[str] = (),
        message: str | None = None,
    ) -> None:
        text = message or f"unknown {kind} '{name}'"
        if message is None and close:
            text += f" — did you mean {', '.join(repr(c) for c in close)}?"
        super().__init__(
            text, kind=kind, name=name, close=list(close), available=list(available)
        )
        self.kind = kind
        self.name = name
        self.close = tuple(close)
        self.available = tuple(available)


class UnknownRecipe(NotFoundError):
    """Recipe name not found in the recipe cascade (docs/processes.md).

    The message names up to 5 close names ("did you mean") and the available
    recipes — the first ``LISTED_AVAILABLE`` of them, then how many more;
    ``details["available"]`` holds them all.
    """

    code = "unknown_recipe"

    LISTED_AVAILABLE = 20
    """Available recipes the message names; more are counted (an inventory may hold thousands)."""

    def __init__(self, name: str, close: Sequence[str] = (), available: Sequence[str] = ()):
        text = f"unknown recipe '{name}'"
        if close:
            text += f" — did you mean {', '.join(repr(c) for c in close)}?"
        if available:
            shown = ", ".join(available[:self.LISTED_AVAILABLE])
            more = len(available) - self.LISTED_AVAILABLE
            text += ("; available: " if not close else " Available: ") + shown + (
                f" and {more} more (see 'vance recipe list')" if more > 0 else "")
        else:
            text += " No recipes are available." if close else "; no recipes are available"
        super().__init__("recipe", name, close, available, message=text)


class UnknownEngine(NotFoundError):
    """A recipe names an engine the active catalog does not have (docs/processes.md)."""

    code = "unknown_engine"

    def __init__(self, name: str, available: Sequence[str] = (), recipe: str | None = None):
        msg = f"unknown engine '{name}'"
        if recipe:
            msg += f" (recipe '{recipe}')"
        if available:
            msg += f"; the active catalog has: {', '.join(available)}"
        super().__init__("engine", name, (), available, message=msg)


class ProcessNotFound(NotFoundError):
    """No process with that id (or unique id prefix) in this tenant."""

    code = "process_not_found"

    def __init__(self, ident: str, message: str | None = None, close: Sequence[str] = ()):
        super().__init__("process", ident, close=close, message=message)


class DuplicateProcessName(InputError):
    """A process name already used in this (tenant, session) (docs/processes.md)."""

    code = "duplicate_process_name"

    def __init__(self, name: str, session: str, tenant: str):
        super().__init__(
            f"a process named '{name}' already exists in session '{session}'"
            " (names are unique per session, whatever the status); choose another --name",
            name=name,
            session=session,
            tenant=tenant,
        )


class ReservedProcessName(InputError):
    """A caller-given process name starting with ``_``: that prefix is vance's own.

    Rule: docs/delegate.md step 2 (``_`` names are internal, as ``_session-root``).

    Args:
        name: the name as given (stripped).
    """

    code = "reserved_process_name"

    def __init__(self, name: str):
        super().__init__(
            f"process name '{name}' is reserved: names starting with '_' are for vance's"
            " own processes (such as '_session-root'); choose a name without the leading '_'",
            field="name", name=name)


class ConfigError(InputError):
    """A config file or config value is invalid; ``key`` is the dotted key path."""

    code = "config_error"


class DocumentError(InputError):
    """A document file (YAML, template) cannot be read or fails its schema.

    Args:
        message: what is wrong, one line.
        path: the file, as a string.
        line: 1-based line of the problem, when known.
        column: 1-based column of the problem, when known.
    """

    code = "document_error"

    def __init__(
        self,
        message: str,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        **details: Any,
    ) -> None:
        where = path or "<input>"
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {message}", path=path, line=line, column=column, **details)
        self.reason = message
        self.path = path
        self.line = line
        self.column = column


class MissingDependency(VanceError):
    """An optional package a command needs is not installed: exit 1.

    Args:
        message: what is missing and the ``pip install`` line that adds it.
        package: the missing distribution's name.
    """

    code = "missing_dependency"


class CatalogError(VanceError):
    """The engine catalog cannot be loaded, validated or activated: exit 1 (docs/catalog.md)."""

    code = "catalog_error"


class InvalidTransition(VanceError):
    """A process status change the transition table forbids (docs/processes.md)."""

    code = "invalid_transition"


class StateError(VanceError):
    """The state database cannot be opened, migrated or written: exit 1."""

    code = "state_error"


class DatabaseLocked(StateError):
    """Another process held the state database's lock past the wait: exit 1 (``state_error``)."""


STORAGE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                            errno.EDQUOT, errno.EFBIG, errno.ENOTDIR, errno.EISDIR,
                            errno.ELOOP, errno.ENAMETOOLONG})
"""OS errors that mean "the environment refuses the write" (permissions, a
read-only file system, a full disk or quota, a file where a folder must be,
a symlink loop, a path too long), not a bug of vance."""

_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


class StorageError(VanceError):
    """The file system refused to let vance write its home or state: exit 1 (runtime).

    Rule: docs/exit-codes.md (``1`` runtime error: an environment
    failure, not bad input).

    Args:
        message: ``cannot write <path>: <reason>`` (or ``cannot access`` for a
            permission error whose operation is not known to be a write).
        **details: ``path`` (the file or folder, may be None), ``errno`` (its
            symbolic name, e.g. ``"EACCES"``).
    """

    code = "storage_error"

    @classmethod
    def from_os_error(cls, exc: OSError, path: Path | str | None = None,
                      writing: bool = False) -> StorageError:
        """Describe ``exc`` in one line naming the path.

        Args:
            exc: the OS error (one of ``STORAGE_ERRNOS``).
            path: the file being written when the error does not name it
                (``write`` and ``fsync`` errors carry no file name).
            writing: the failing operation is known to be a write.
        """
        where = exc.filename if exc.filename is not None else path
        reason = exc.strerror or str(exc)
        verb = "write" if writing or exc.errno in _FULL else "access"
        name = errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else None
        target = f" {where}" if where is not None else ""
        text = f"cannot {verb}{target}: {reason}"
        return cls(text, path=None if where is None else str(where), errno=name)


def as_vance_error(exc: BaseException) -> VanceError | None:
    """Return the VanceError an exception stands for, or None when vance did not foresee it.

    The one reading of foreign exceptions that are not vance's bugs, shared by
    the command line's boundary and the MCP server (docs/exit-codes.md).

    Args:
        exc: anything a command or a tool raised.

    Returns:
        ``exc`` itself when it is a VanceError; a ``StorageError`` naming the
        path for an ``OSError`` of ``STORAGE_ERRNOS``; a ``StateError`` for a
        SQLite error of the database itself (``OperationalError`` — locked,
        disk I/O, full — or a plain ``DatabaseError`` such as a corrupt file).
        None for anything else, SQLite errors that mean a bug of vance
        (``IntegrityError``, ``ProgrammingError`` …) included.
    """
    if isinstance(exc, VanceError):
        return exc
    if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
        return StorageError.from_os_error(exc)
    if isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError:
        return StateError(f"state database error: {exc}")
    return None


class LLMError(VanceError):
    """An LLM call failed (network, auth, timeout, bad reply); the key never appears in it.

    Args:
        message: redacted, one line.
        timeout: True when the failure was a timeout.
    """

    code = "llm_error"

    def __init__(self, message: str, timeout: bool = False, **details: Any) -> None:
        super().__init__(message, timeout=timeout, **details)
        self.timeout = timeout


class LLMNotConfigured(LLMError):
    """No base URL and no key configured (docs/delegate.md, offline paragraph)."""

    code = "llm_not_configured"


class LocalModelError(LLMError):
    """The local model server (``llm.local_model``) cannot be started or stopped: exit 1.

    Rule: docs/configuration.md#local-models.
    """

    code = "local_model_error"


class BudgetExceeded(VanceError):
    """A turn hit one of its process's budgets (LLM calls per turn, tokens, seconds).

    Args:
        message: names the budget and its limit.
        budget: ``llm_calls``, ``tokens`` or ``seconds``.
        limit: the limit that was reached.
    """

    code = "budget_exceeded"

    def __init__(self, message: str, budget: str, limit: float) -> None:
        super().__init__(message, budget=budget, limit=limit)
        self.budget = budget


class NoEngineCode(VanceError):
    """A process's engine has no local implementation, so no turn can run (exit 1)."""

    code = "no_engine_code"


class NoWorker(VanceError):
    """Team mode: a turn waits in the queue and no ``vance worker`` of the team is alive."""

    code = "no_worker"


class CannotRun(InputError):
    """A turn cannot start in the process's status (CLOSED, or a turn is running): exit 2."""

    code = "cannot_run"


class UnknownWizard(NotFoundError):
    """Wizard name not found in the wizard cascade (docs/wizards.md): exit 2."""

    code = "unknown_wizard"

    def __init__(self, name: str, close: Sequence[str] = (), available: Sequence[str] = ()):
        super().__init__("wizard", name, close, available)


class WizardBroken(DocumentError):
    """A wizard asked for by name exists but fails to load (docs/wizards.md "Loading")."""

    code = "wizard_broken"


class InvalidWizardLink(InputError):
    """A ``vance:/wizards/<name>?kind=wizard&…`` link that cannot be opened (docs/wizards.md).

    Args:
        message: what is wrong with the link, one line.
        uri: the link as given.
    """

    code = "invalid_wizard_link"

    def __init__(self, message: str, uri: str) -> None:
        super().__init__(message, uri=uri)
        self.uri = uri


class RenderError(VanceError):
    """A wizard's template failed while rendering (exit 1): the template is at fault.

    Every exception Jinja2 or the sandbox raises while rendering becomes this one
    error, so internals never leak as a traceback.

    Args:
        message: one line naming the wizard and the cause.
        wizard: the wizard's name.
    """

    code = "render_error"

    def __init__(self, message: str, wizard: str | None = None) -> None:
        super().__init__(message, wizard=wizard)
        self.wizard = wizard


class FormInvalid(InputError):
    """Wizard form values failed validation; ``errors`` is the full list (docs/wizards.md).

    Args:
        errors: ``[{"field": "members[2].name", "error": "required"}, …]``, all of them.
    """

    code = "form_invalid"

    def __init__(self, errors: Sequence[Mapping[str, str]], message: str | None = None):
        errs = [dict(e) for e in errors]
        summary = message or "invalid values: " + ", ".join(
            f"{e['field']}: {e['error']}" for e in errs
        )
        super().__init__(summary, errors=errs)
        self.errors = errs

    def to_json(self) -> dict[str, Any]:
        """Return ``{"errors": [...]}``, the shape docs/wizards.md fixes."""
        return {"errors": self.errors}


class Cancelled(VanceError):
    """The person cancelled (Ctrl-C, Ctrl-D): exit 130, no traceback.

    Args:
        partial: the answers given so far (a wizard's partial form), for callers that keep them.
    """

    code = "cancelled"
    exit_code = EXIT_INTERRUPTED

    def __init__(self, message: str = "cancelled", partial: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.partial = dict(partial or {})


class TaskTemplateError(InputError):
    """A batch task template that does not compile, or fails to render for one item.

    A compile error stops the batch before any item runs (exit 2); a render
    error is that item's error and the batch goes on (docs/exit-codes.md, batch).

    Args:
        message: one line naming the item (when there is one) and the cause.
        **details: ``item`` (1-based item number) and ``line`` (input line), when known.
    """

    code = "task_template_error"
