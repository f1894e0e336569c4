"""The deny floor and the project fence: where no tool may read or write, whatever the rules say.

Rule (docs/tools.md#the-gate): a path is checked as given (made absolute) and as resolved (every
symbolic link followed); either one on the floor refuses the call, and so does a resolved path
outside the project folder. No ``tools.allow`` rule lifts either check.
"""

from __future__ import annotations

from pathlib import Path

from vance_cli.tools.tool import Refused, ToolContext

HOME_FLOOR = (".ssh", ".aws", ".gnupg", ".netrc")
"""Entries of the home folder on the deny floor (keys and credentials)."""


def is_env_file(name: str) -> bool:
    """True for a ``.env`` file name (``.env``, ``.env.local``, …)."""
    return name == ".env" or name.startswith(".env.")


def floor_reason(path: Path, context: ToolContext) -> str | None:
    """Return why an absolute ``path`` is on the deny floor, or None when it is not.

    Takes the path as it is (no symlinks followed): callers check the given and the resolved form.
    """
    for entry in HOME_FLOOR:
        if path.is_relative_to(context.home / entry):
            return f"~/{entry} holds keys and credentials"
    if any(is_env_file(part) for part in path.parts):
        return ".env files hold secrets"
    for folder, what in ((context.state_dir, "state"), (context.config_dir, "config")):
        if folder is not None and path.is_relative_to(folder):
            return f"it is inside vance's {what} folder ({folder})"
    return None


def absolute(raw: str, context: ToolContext) -> Path:
    """Return a path the model gave as an absolute, normalised path (``~`` expanded, not resolved).

    A relative path is taken from the project folder.
    """
    path = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    joined = path if path.is_absolute() else context.project / path
    parts: list[str] = []
    for part in joined.parts[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return Path(joined.anchor, *parts)


def check_path(raw: str, context: ToolContext) -> Path:
    """Return the resolved path of ``raw`` when a tool may use it.

    Raises:
        Refused: empty, on the deny floor (given or resolved), or outside the project folder
            once symbolic links are followed; the message says which.
    """
    if not raw.strip():
        raise Refused("the path is empty")
    if "\0" in raw:
        raise Refused("the path holds a NUL character")
    given = absolute(raw, context)
    reason = floor_reason(given, context)
    if reason is None:
        try:
            real = given.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise Refused(f"{raw!r} cannot be resolved ({exc})") from None
        reason = floor_reason(real, context)
    if reason is not None:
        raise Refused(f"{raw!r} is on vance's deny floor: {reason}; no rule can allow it")
    if not real.is_relative_to(context.project):
        link = " (a symbolic link leads there)" if given.is_relative_to(context.project) else ""
        raise Refused(f"{raw!r} is {real}, outside the project folder {context.project}{link};"
                      " these tools only reach files inside the project folder")
    return real


def shown(path: Path, context: ToolContext) -> str:
    """Return ``path`` relative to the project folder, as the model should name it."""
    try:
        return path.relative_to(context.project).as_posix() or "."
    except ValueError:
        return str(path)
