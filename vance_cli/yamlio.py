"""The one safe YAML reader (and writer) of vance.

Invariants (DESIGN.md §8 "YAML"):
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
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import yaml

from vance_cli.errors import STORAGE_ERRNOS, DocumentError, StorageError

RawYaml = Any
"""Plain data as YAML yields it: dict, list, str, int, float, bool, None."""

try:  # LibYAML's parser; the pure-Python one is the fallback
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without LibYAML
    _BaseLoader = yaml.SafeLoader


class YamlInt(int):
    """An int that remembers the text it was written as (``source``)."""

    source: str

    def __new__(cls, value: int, source: str) -> YamlInt:
        """Build the int ``value`` remembering ``source``."""
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


class YamlFloat(float):
    """A float that remembers the text it was written as (``source``), e.g. ``"3.10"``."""

    source: str

    def __new__(cls, value: float, source: str) -> YamlFloat:
        """Build the float ``value`` remembering ``source``."""
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


# YAML 1.2 core schema patterns: what a plain scalar must look like to be a
# bool, int or float. Everything else is a string (YAML 1.1's yes/no/on/off,
# sexagesimal 1:30, octal 010 as 8 are gone).
_BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT_RE = re.compile(r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$")
_FLOAT_RE = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NULL_RE = re.compile(r"^(?:~|null|Null|NULL|)$")


class VanceLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader with YAML 1.2-like implicit types and duplicate-key detection."""

    # a fresh table: the YAML 1.1 resolvers of the base class are not inherited
    yaml_implicit_resolvers: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Build a mapping, rejecting duplicate keys with the second key's position."""
        self.flatten_mapping(node)  # resolve "<<" merge keys first
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: let the base class report it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found duplicate key {key!r}", key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    clean = str(text).replace("_", "")
    if clean.startswith(("0x", "0X")):
        value = int(clean, 16)
    elif clean.startswith(("0o", "0O")):
        value = int(clean[2:], 8)
    else:
        value = int(clean, 10)
    return YamlInt(value, str(text))


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node))
    lowered = text.lower()
    if lowered.endswith(".inf"):
        value = float("-inf") if lowered.startswith("-") else float("inf")
    elif lowered == ".nan":
        value = float("nan")
    else:
        value = float(text)
    return YamlFloat(value, text)


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", _BOOL_RE, "tTfF"),
    ("tag:yaml.org,2002:int", _INT_RE, "-+0123456789"),
    ("tag:yaml.org,2002:float", _FLOAT_RE, "-+.0123456789"),
    ("tag:yaml.org,2002:null", _NULL_RE, ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:merge", re.compile(r"^<<$"), "<"),
):
    VanceLoader.add_implicit_resolver(_tag, _pattern, list(_first))
VanceLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
VanceLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
VanceLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def as_text(value: Any) -> Any:
    """Return the written text of a YAML number, else ``value`` unchanged.

    Use where a schema expects a string: ``3.10`` stays ``"3.10"``, ``010``
    stays ``"010"``; a boolean becomes ``"true"``/``"false"``.
    """
    if isinstance(value, YamlInt | YamlFloat):
        return value.source
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


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
    text = text.removeprefix("\ufeff")
    try:
        return yaml.load(text, Loader=VanceLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        raise DocumentError(
            f"YAML error: {problem}",
            path=source,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as exc:
        raise DocumentError(f"YAML error: {exc}", path=source) from None


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Return the 1-based line of every mapping key, by its path of keys.

    Used to point validation problems (found on the plain data ``loads``
    returns) at a line. Only mapping keys are recorded; sequence items are
    not. Cheap enough to call only once a problem has been found.

    Args:
        text: the document text (a BOM is dropped); must be valid YAML.

    Returns:
        ``{("engines", "ford", "purpose"): 7, …}``; empty when the text does
        not compose (it is then a syntax error, which carries its own line).
    """
    text = text.removeprefix("\ufeff")
    try:
        root = yaml.compose(text, Loader=VanceLoader)
    except yaml.YAMLError:
        return {}
    out: dict[tuple[str, ...], int] = {}
    stack: list[tuple[tuple[str, ...], yaml.Node | None]] = [((), root)]
    while stack:
        prefix, node = stack.pop()
        if not isinstance(node, yaml.MappingNode):
            continue
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                path = (*prefix, str(key_node.value))
                out.setdefault(path, key_node.start_mark.line + 1)
                stack.append((path, value_node))
    return out


def load_file(path: Path) -> RawYaml:
    """Read and parse a UTF-8 YAML file.

    Raises:
        DocumentError: unreadable file, invalid UTF-8, or invalid YAML (with position).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"cannot read file: {exc.strerror}", path=str(path)) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"not UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})", path=str(path)
        ) from None
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


class _Dumper(yaml.SafeDumper):
    """Safe dumper that writes block style and keeps key order."""


def _repr_int(dumper: yaml.SafeDumper, value: int) -> yaml.ScalarNode:
    return dumper.represent_int(int(value))


def _repr_float(dumper: yaml.SafeDumper, value: float) -> yaml.ScalarNode:
    return dumper.represent_float(float(value))


_Dumper.add_representer(YamlInt, _repr_int)
_Dumper.add_representer(YamlFloat, _repr_float)


def dumps(data: Mapping[str, Any] | list[Any]) -> str:
    """Serialize plain data to block-style YAML, keys in insertion order, UTF-8 text."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False)


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` atomically: temp file in the same folder, fsync, rename.

    Readers see the old or the new content, never a half-written file.

    Args:
        path: the destination; its folder is created when missing.
        text: UTF-8 content.
        mode: optional permission bits for the new file (e.g. ``0o600``).

    Raises:
        StorageError: the file system refuses the write (permission denied,
            read-only, disk full: ``errors.STORAGE_ERRNOS``), naming ``path``;
            the old content is kept.
    """
    try:
        _write_replace(path, text, mode)
    except OSError as exc:
        if exc.errno in STORAGE_ERRNOS:
            if exc.filename is not None and Path(exc.filename).parent == path.parent:
                exc.filename = str(path)  # name the file, not our temporary file beside it
            raise StorageError.from_os_error(exc, path, writing=True) from None
        raise


def _write_replace(path: Path, text: str, mode: int | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
