"""The session root: the process that stands for the session itself.

Rules (docs/delegate.md, async fallback):
- Every (tenant, session) may have one root process: recipe
  ``session-root`` (internal, engine ``arthur``), reserved name
  ``_session-root``. It is the default recipient of notifications when no
  ``--caller`` is given, e.g. the event a background Slartibartfast run
  posts when it ends (``vance process events --for <root id>``).
- It is created lazily, the first time something needs it, and then reused
  whatever its status (a process name stays taken after it closes, and
  events are delivered to closed processes too).
- Two commands creating it at once cannot both succeed (process names are
  unique per session in the database); the loser reads the winner's.
- A process named ``_session-root`` of another recipe is not taken for the
  root: that is an input error telling the user to pass ``--caller``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.base.errors import DuplicateProcessName, InputError
from vance_cli.processes.model import Process, ProcessSpec
from vance_cli.processes.records import create_process
from vance_cli.state import process_store

if TYPE_CHECKING:
    from vance_cli.workspace import Workspace

ROOT_NAME = "_session-root"
"""Reserved process name of a session's root process."""

ROOT_RECIPE = "session-root"
"""Recipe of the session root (bundled, ``internal: true``)."""


def find_session_root(ws: Workspace) -> Process | None:
    """Return this session's root process, or None when it was never created.

    Raises:
        InputError: ``_session-root`` is taken by a process of another recipe.
    """
    settings = ws.settings
    row = process_store.find_by_name(ws.db, settings.tenant, settings.session, ROOT_NAME)
    if row is None:
        return None
    process = Process.from_row(row)
    if process.recipe != ROOT_RECIPE:
        raise InputError(
            f"the process name '{ROOT_NAME}' is reserved for the session root, but process "
            f"{process.id} (recipe '{process.recipe}') has it; pass --caller PID", name=ROOT_NAME)
    return process


def session_root(ws: Workspace) -> Process:
    """Return this session's root process, creating it on first use.

    Raises:
        InputError: the reserved name is taken by a process of another recipe.
        UnknownRecipe, UnknownEngine: the ``session-root`` recipe or its
            engine is missing (a tenant removed it).
    """
    found = find_session_root(ws)
    if found is not None:
        return found
    spec = ProcessSpec(recipe=ROOT_RECIPE, name=ROOT_NAME,
                       goal=f"root of session '{ws.settings.session}'", internal=True)
    try:
        return create_process(ws, spec)
    except DuplicateProcessName:  # created concurrently: take that one
        found = find_session_root(ws)
        if found is None:  # pragma: no cover - the name was just seen taken
            raise
        return found
