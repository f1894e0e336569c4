"""A rebuildable cache of parsed documents, so warm runs skip the YAML parser.

Importing PyYAML and parsing the bundled recipes costs more than everything
else the offline ``vance delegate`` does; a JSON file of already-parsed
documents costs a fraction of a millisecond to read.

Invariants:
- One JSON file (``<state>/cache/documents.json``; the wizard listing uses
  ``wizards.json``) maps a document's
  absolute path to its parsed value, valid only while the file's
  modification time (ns), size and inode are unchanged; the file is
  stat-ed *before* it is read, so a change during parsing only makes the
  entry stale.
- Values are plain JSON: a parser's result must survive a JSON round trip
  to be cached (recipes do: see ``Recipe.to_cache``; a visible recipe's
  entry also holds the ranking's analysis of its text, ``recipe_terms``). Raw YAML data is
  stored through ``pack_yaml`` (numbers keep their written text), so the
  wizard listing rebuilds a wizard from it without the YAML parser.
- A cache of another format or vance version, or one that cannot be read,
  is ignored and rebuilt. It is written atomically (temporary file, then
  rename), so concurrent writers race harmlessly: the last whole file wins.
- Safe to delete at any time; entries of files that no longer exist are
  dropped on save.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vance_cli import __version__
from vance_cli.base import files
from vance_cli.base.yaml_types import YamlFloat, YamlInt

FORMAT = 4
"""Cache layout version; bump it when a cached parser's output changes (2: recipe
entries hold the ranking's analysis; 3: recipes have a prompt; 4: recipe params are
checked against their engine's schema)."""

FILE_NAME = "documents.json"
"""The cache file inside ``Paths.cache_dir`` (recipes)."""

WIZARDS_FILE_NAME = "wizards.json"
"""The wizard listing's cache file: apart, so commands that read only recipes never
load the (larger) wizard entries."""


def _signature(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


class DocumentCache:
    """Parsed documents keyed by file path and file signature.

    Args:
        path: the cache file.
        entries: loaded entries (path → ``{"sig", "kind", "value"}``).
    """

    def __init__(self, path: Path, entries: dict[str, Any] | None = None) -> None:
        self.path = path
        self._entries: dict[str, Any] = entries or {}
        self._dirty = False

    @classmethod
    def load(cls, cache_dir: Path, file_name: str = FILE_NAME) -> DocumentCache:
        """Read ``cache_dir / file_name``; a missing, broken or foreign cache is empty."""
        path = cache_dir / file_name
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return cls(path)
        if not isinstance(data, dict) or data.get("format") != FORMAT or \
                data.get("version") != __version__ or not isinstance(data.get("entries"), dict):
            return cls(path)
        return cls(path, data["entries"])

    def signature(self, file: Path) -> list[int] | None:
        """Return the file's (mtime ns, size, inode), or None when it cannot be stat-ed."""
        return _signature(file)

    def get(self, file: Path, kind: str, signature: list[int] | None) -> Any | None:
        """Return the cached value of ``file`` for ``kind`` if its signature still matches."""
        entry = self._entries.get(str(file))
        if signature is None or not isinstance(entry, dict):
            return None
        if entry.get("sig") != signature or entry.get("kind") != kind:
            return None
        return entry.get("value")

    def put(self, file: Path, kind: str, signature: list[int] | None, value: Any) -> None:
        """Remember ``value`` for ``file`` as it was when ``signature`` was taken."""
        if signature is None:
            return
        self._entries[str(file)] = {"sig": signature, "kind": kind, "value": value}
        self._dirty = True

    def save(self) -> None:
        """Write the cache if it changed; never raises (a cache write failure costs speed only)."""
        if not self._dirty:
            return
        self._entries = {k: v for k, v in self._entries.items() if os.path.exists(k)}
        data = {"format": FORMAT, "version": __version__, "entries": self._entries}
        import secrets  # stdlib, off the light paths: a warm run writes no cache

        tmp = self.path.with_name(f"{files.temp_prefix(self.path)}{secrets.token_hex(4)}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            files.sweep_leftovers(self.path)
            tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass


def pack_yaml(data: Any) -> dict[str, Any] | None:
    """Return raw YAML data (``yamlio`` output) in a JSON form, or None when it has none.

    The form is ``{"data": <the data, numbers as JSON numbers>, "numbers":
    [[<path of keys and indexes>, "int" | "float", <written text>], …]}``:
    numbers keep the text they were written as (``3.10``, ``010``), so
    ``unpack_yaml`` gives back values that compare, and read through
    ``yaml_types.as_text``, exactly as the parser's; everything else needs no
    unpacking. Non-string mapping keys and explicit tags (``!!binary``,
    ``!!set`` …) have no JSON form: None.
    """
    numbers: list[list[Any]] = []

    def pack(value: Any, path: list[str | int]) -> Any:
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, YamlInt | YamlFloat):
            kind = "int" if isinstance(value, YamlInt) else "float"
            numbers.append([path, kind, value.source])
            return int(value) if kind == "int" else float(value)
        if isinstance(value, list):
            return [pack(item, [*path, i]) for i, item in enumerate(value)]
        if isinstance(value, dict) and all(type(key) is str for key in value):
            return {key: pack(item, [*path, key]) for key, item in value.items()}
        raise TypeError(type(value).__name__)

    try:
        return {"data": pack(data, []), "numbers": numbers}
    except TypeError:
        return None


def unpack_yaml(packed: Any) -> Any:
    """Return the raw YAML data that ``pack_yaml`` packed (numbers are restored in place).

    Raises:
        ValueError: ``packed`` is not something ``pack_yaml`` wrote.
    """
    try:
        data = packed["data"]
        for path, kind, text in packed["numbers"]:
            if not path:
                return YamlInt(data, text) if kind == "int" else YamlFloat(data, text)
            parent = data
            for step in path[:-1]:
                parent = parent[step]
            value = parent[path[-1]]
            parent[path[-1]] = YamlInt(value, text) if kind == "int" else YamlFloat(value, text)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ValueError(f"not packed YAML: {exc}") from None
    return data
