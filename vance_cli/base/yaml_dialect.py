"""vance's YAML dialect on PyYAML: safe loading, YAML 1.2-like scalars, no duplicate keys.

The heavy half of ``yamlio``: it imports PyYAML, so ``yamlio`` imports this
module only when a document really has to be parsed or written (a warm run
reads parsed documents from the cache and never loads PyYAML).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import yaml

from vance_cli.base.errors import DocumentError
from vance_cli.base.yaml_types import RawYaml, YamlFloat, YamlInt

try:  # LibYAML's parser; the pure-Python one is the fallback
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without LibYAML
    _BaseLoader = yaml.SafeLoader


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


def parse(text: str, source: str | None = None) -> RawYaml:
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
        data = yaml.load(text, Loader=VanceLoader)
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
    if "*" in text and expanded_size(data) > MAX_EXPANDED_VALUES:
        raise DocumentError(f"YAML error: aliases (*name) expand to more than "
                            f"{MAX_EXPANDED_VALUES:,} values", path=source)
    return data


MAX_EXPANDED_VALUES = 100_000
"""Most values a document may hold once its aliases are expanded. YAML aliases share
one value, so ten lines can stand for a billion ("billion laughs"): anything that walks
the data later (a process's params as JSON) would expand them."""


def expanded_size(data: Any) -> int:
    """Return how many values ``data`` holds with every shared value counted each time.

    Linear in the distinct values (each is sized once, then its size is reused).
    """
    sizes: dict[int, int] = {}
    opened: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        item, done = stack.pop()
        children = (list(item.keys()) + list(item.values()) if isinstance(item, dict)
                    else item if isinstance(item, list) else ())
        if done:
            sizes[id(item)] = 1 + sum(sizes.get(id(c), 1) for c in children)
        elif id(item) in opened and id(item) not in sizes:
            return MAX_EXPANDED_VALUES + 1  # a value that holds itself never ends
        elif id(item) not in sizes and children:
            opened.add(id(item))
            stack.append((item, True))
            stack.extend((c, False) for c in children
                         if isinstance(c, dict | list) and id(c) not in sizes)
    return sizes.get(id(data), 1)


def compose_key_lines(text: str) -> dict[tuple[str, ...], int]:
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


class _Dumper(yaml.SafeDumper):
    """Safe dumper that writes block style and keeps key order."""


def _repr_int(dumper: yaml.SafeDumper, value: int) -> yaml.ScalarNode:
    return dumper.represent_int(int(value))


def _repr_float(dumper: yaml.SafeDumper, value: float) -> yaml.ScalarNode:
    return dumper.represent_float(float(value))


_Dumper.add_representer(YamlInt, _repr_int)
_Dumper.add_representer(YamlFloat, _repr_float)


def dump(data: Mapping[str, Any] | list[Any]) -> str:
    """Serialize plain data to block-style YAML, keys in insertion order, UTF-8 text."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False)
