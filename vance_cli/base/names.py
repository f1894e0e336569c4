"""Names that become paths: document names and tenant/project/user/session ids; "did you mean".

Rules (docs/documents.md, "Document names"):
- A document name is a relative path of ``[A-Za-z0-9_.-]`` segments; ``..``,
  ``.``, absolute paths and empty segments are rejected before any disk access
  (``check_name``), as Jinja's ``split_template_path`` does.
- An id is one such segment, at most ``ID_MAX`` characters (``check_id``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from vance_cli.base.errors import InvalidDocumentName, InvalidId

SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")
"""One path segment of a document name, or an id."""


ID_MAX = 128
"""Longest tenant, project, user or session id, in characters: an id is a folder name
(``_user_<user>`` too), and file systems allow 255 bytes per name."""


def check_name(name: str) -> str:
    """Validate a document name and return it unchanged.

    Args:
        name: e.g. ``"essay-pipeline"`` or ``"_slart/20261129-ab12/newsletter"``.

    Returns:
        The same name.

    Raises:
        InvalidDocumentName: empty, absolute, with ``..``/``.``, an empty
            segment, or a character outside ``[A-Za-z0-9_.-]``.
    """
    if not isinstance(name, str) or not name:
        raise InvalidDocumentName("document name is empty", name=str(name))
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise InvalidDocumentName(f"document name '{name}' is an absolute path", name=name)
    for segment in name.split("/"):
        if segment == "":
            raise InvalidDocumentName(f"document name '{name}' has an empty segment", name=name)
        if segment in (".", ".."):
            raise InvalidDocumentName(
                f"document name '{name}' contains '{segment}'", name=name
            )
        if not SEGMENT.fullmatch(segment):
            raise InvalidDocumentName(
                f"document name '{name}' has a character outside [A-Za-z0-9_.-]", name=name
            )
    return name


def check_id(value: str, kind: str) -> str:
    """Validate a tenant, project, user or session id and return it unchanged.

    An id becomes one path segment (``<data>/tenants/<tenant>/projects/<project>``),
    so it follows the document-segment rule: ``[A-Za-z0-9_.-]+``, not ``.`` or
    ``..``, at most ``ID_MAX`` characters. Settings check every id when they are
    read (flags, environment, config file, ``config set``); ``Paths`` checks
    again before it builds a folder from one.

    Args:
        value: the id as given.
        kind: what it is, for the message: ``"tenant"``, ``"project"`` …

    Returns:
        The same id.

    Raises:
        InvalidId: empty, ``.``/``..``, too long, or a character outside ``[A-Za-z0-9_.-]``.

    Rule: docs/documents.md.
    """
    if not isinstance(value, str) or not value:
        raise InvalidId(f"{kind} id is empty", kind=kind, value=str(value))
    if value in (".", ".."):
        raise InvalidId(f"{kind} id {value!r} is not allowed (it names a folder, not an id)",
                        kind=kind, value=value)
    if len(value) > ID_MAX:
        raise InvalidId(f"{kind} id is longer than {ID_MAX} characters", kind=kind, value=value)
    if not SEGMENT.fullmatch(value):
        raise InvalidId(f"{kind} id {value!r} may only hold letters, digits, '_', '.' and '-' "
                        "(it becomes a folder name)", kind=kind, value=value)
    return value


def is_valid_name(name: str) -> bool:
    """Return True when ``check_name`` would accept ``name``."""
    try:
        check_name(name)
    except InvalidDocumentName:
        return False
    return True


def close_matches(name: str, candidates: Sequence[str], limit: int = 5) -> list[str]:
    """Return up to ``limit`` candidates that look like ``name``, best first ("did you mean").

    Uses difflib's ratio (cutoff 0.5) plus candidates that contain ``name`` or
    are contained in it, so ``essay`` suggests ``essay-pipeline``.
    """
    ranked = difflib.get_close_matches(name, candidates, n=limit, cutoff=0.5)
    lowered = name.lower()
    for cand in candidates:
        if len(ranked) >= limit:
            break
        if cand not in ranked and lowered and (lowered in cand.lower() or cand.lower() in lowered):
            ranked.append(cand)
    return ranked[:limit]
