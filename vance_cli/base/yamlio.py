"""The one safe YAML reader (and writer) of vance: the light facade over ``yaml_dialect``.

Invariants (docs/documents.md "Recipes"):
- Documents are UTF-8; a BOM is tolerated. Invalid UTF-8 is an error that
  names the file, never a crash.
- Safe loading only, with LibYAML's C parser when present (about 5 times faster).
- YAML 1.1 surprises never corrupt data silently: only ``true``/``false``
  (any case) are booleans, so ``no``/``on``/``yes``/``off`` stay strings; a
  number keeps the exact text it was written as (``3.10``, ``010``, ``1e3``)
  in its ``source`` attribute, so a schema that expects a string gets the
  text back instead of ``3.1`` or ``8`` (see ``as_text``).
- A duplicate key in a mapping is an error (PyYAML would keep the last one).
- Errors are ``DocumentError`` with file, 1-based line and column.

PyYAML loads on the first document parsed or written (``yaml_dialect``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vance_cli.base import files
from vance_cli.base.errors import DocumentError
from vance_cli.base.yaml_types import RawYaml


def loads(text: str, source: str | None = None) -> RawYaml:
    """Parse one YAML document from text.

    Args:
        text: the document; a leading BOM is dropped.
        source: file name for error messages.

    Returns:
        Plain data (see ``RawYaml``); numbers are ``YamlInt``/``YamlFloat``.

    Raises:
        DocumentError: on a syntax error or duplicate key, with 1-based line and column.
    """
    from vance_cli.base import yaml_dialect  # heavy: PyYAML

    return yaml_dialect.parse(text, source)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Return the 1-based line of every mapping key, by its path of keys (see ``yaml_dialect``).

    Returns:
        ``{("engines", "ford", "purpose"): 7, …}``; empty when the text does not compose.
    """
    from vance_cli.base import yaml_dialect  # heavy: PyYAML

    return yaml_dialect.compose_key_lines(text)


MAX_DOCUMENT_BYTES = 1_000_000
"""Largest document file read (recipes, wizards, the config file), in bytes."""


def load_file(path: Path, root: Path | None = None) -> RawYaml:
    """Read and parse a UTF-8 YAML file (a regular file of at most ``MAX_DOCUMENT_BYTES``).

    Args:
        path: the file.
        root: its layer folder; a link leading out of it is refused (``files.read_limited``).

    Raises:
        DocumentError: unreadable or refused file, invalid UTF-8, or invalid YAML
            (with position).
    """
    try:
        data = files.read_limited(path, MAX_DOCUMENT_BYTES, root)
    except files.FileRefused as exc:
        raise DocumentError(exc.reason, path=str(path)) from None
    except OSError as exc:
        raise DocumentError(f"cannot read file: {exc.strerror}", path=str(path)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(files.not_utf8(exc), path=str(path)) from None
    return loads(text, source=str(path))


def load_mapping(path: Path) -> dict[str, RawYaml]:
    """Read a YAML file whose top level must be a mapping (an empty file is ``{}``).

    Raises:
        DocumentError: as ``load_file``, or when the top level is not a mapping.
    """
    data = load_file(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DocumentError(
            f"expected a mapping at the top level, found {type(data).__name__}", path=str(path)
        )
    return data


def dumps(data: Mapping[str, Any] | list[Any]) -> str:
    """Serialize plain data to block-style YAML, keys in insertion order, UTF-8 text."""
    from vance_cli.base import yaml_dialect  # heavy: PyYAML

    return yaml_dialect.dump(data)
