"""Text from outside — arguments, environment, stdin, files — is valid UTF-8, or a clear error.

Invariants:
- Bytes read from stdin or a file are decoded here (``decode_utf8``), as
  UTF-8 with a byte-order mark tolerated; anything else is an ``InputError``
  (exit 2) naming the source and the first bad byte.
- Python decodes ``sys.argv`` and ``os.environ`` with ``surrogateescape``:
  a byte that is not UTF-8 becomes a lone surrogate (``U+DC80`` to ``U+DCFF``)
  that no encoder accepts later (the JSON output, SQLite, the LLM request
  all fail with ``UnicodeEncodeError``). ``check_utf8`` finds such text at
  the boundary, before anything uses it.
- A text is *blank* (``is_blank``) when no character of it shows: white
  space, and the invisible format characters (zero-width space and joiners,
  the BOM, word joiner …). A blank task is an empty task.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from vance_cli.base.errors import InputError
from vance_cli.base.patterns import Lazy

_SURROGATE = Lazy("[\ud800-\udfff]")

BLANK_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})
"""Unicode categories that show nothing: space, line and paragraph separators,
control characters and format characters (``U+200B`` zero-width space,
``U+200C``/``U+200D`` zero-width (non-)joiner, ``U+2060`` word joiner,
``U+FEFF`` byte-order mark, ``U+00AD`` soft hyphen, bidi marks)."""


def is_blank(text: str) -> bool:
    """Return True when ``text`` shows nothing: empty, white space or invisible format characters.

    Rule: docs/delegate.md step 1 (an empty task is ``NONE`` ``empty_task``); a
    task of ``"\u200b\u200d\ufeff"`` is as empty as one of spaces.

    Args:
        text: any text (a task, an item line).
    """
    return all(c.isspace() or unicodedata.category(c) in BLANK_CATEGORIES for c in text)


def _bad_byte(char: str) -> str:
    code = ord(char)
    return f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"


def first_invalid(text: str) -> tuple[int, str] | None:
    """Return ``(position, "byte 0x..")`` of the first character that is no UTF-8, or None.

    Args:
        text: a string decoded with ``surrogateescape`` (argv, environment).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # UTF-8 encodes every character but a lone surrogate
        return exc.start, _bad_byte(text[exc.start])
    return None


def check_utf8(text: str, what: str, **details: Any) -> str:
    """Return ``text`` when it came from valid UTF-8.

    Args:
        text: a string decoded with ``surrogateescape``.
        what: names the source for the message, e.g. ``"the value of --task"``.
        **details: extra data for the error's ``--json`` form.

    Raises:
        InputError: ``text`` holds a byte that was not UTF-8 (a lone surrogate).
    """
    bad = first_invalid(text)
    if bad is not None:
        position, byte = bad
        raise InputError(f"{what} is not valid UTF-8 ({byte} at character {position + 1})",
                         **details)
    return text


def decode_utf8(data: bytes, what: str, **details: Any) -> str:
    """Decode bytes from stdin or a file as UTF-8 (a byte-order mark is dropped).

    Args:
        data: the raw bytes.
        what: names the source for the message, e.g. ``"stdin (--task -)"``.
        **details: extra data for the error's ``--json`` form.

    Returns:
        The text.

    Raises:
        InputError: ``data`` is not valid UTF-8.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start]
        offset = exc.start + (len(data) - len(exc.object))  # the BOM, when it was cut off
        raise InputError(f"{what} is not valid UTF-8 (byte 0x{bad:02x} at offset {offset})",
                         **details) from None


def scrub_surrogates(text: str) -> str:
    r"""Return ``text`` with each lone surrogate replaced by U+FFFD (the replacement character).

    For text that arrives already decoded — a server's JSON may escape
    ``"\\udcff"`` — and that no encoder would accept later (SQLite, stdout).
    """
    return _SURROGATE.re.sub("\ufffd", text) if _SURROGATE.re.search(text) else text
