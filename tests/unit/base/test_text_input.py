from __future__ import annotations

import pytest

from vance_cli.base.errors import InputError
from vance_cli.base.text_input import check_utf8, decode_utf8, first_invalid, is_blank


@pytest.mark.parametrize(
    ("data", "text", "problem"),
    [
        (b"Translate", "Translate", None),
        ("\ufeffÜbersetze".encode(), "Übersetze", None),  # a BOM is dropped
        (b"\xff Translate", None, "byte 0xff at offset 0"),
        (b"Translate th\xe9 text", None, "byte 0xe9 at offset 12"),
        (b"\xef\xbb\xbfab\xffc", None, "byte 0xff at offset 5"),  # offset counts the BOM
        (b"\xc3", None, "byte 0xc3 at offset 0"),  # cut-off sequence
    ],
)
def test_decode_utf8(data: bytes, text: str | None, problem: str | None) -> None:
    if problem is None:
        assert decode_utf8(data, "stdin") == text
        return
    with pytest.raises(InputError, match=rf"^stdin is not valid UTF-8 \({problem}\)$"):
        decode_utf8(data, "stdin")


@pytest.mark.parametrize(
    ("raw", "bad"),
    [
        (b"plain", None),
        ("Grüße".encode(), None),
        (b"n\xe9", (1, "byte 0xe9")),
        (b"\xff\xfe", (0, "byte 0xff")),
    ],
)
def test_surrogate_escaped_text_is_found(raw: bytes, bad: tuple[int, str] | None) -> None:
    text = raw.decode("utf-8", "surrogateescape")  # as Python decodes argv and environ
    assert first_invalid(text) == bad
    if bad is None:
        assert check_utf8(text, "x") == text
    else:
        with pytest.raises(InputError, match=rf"x is not valid UTF-8 \({bad[1]} at character"):
            check_utf8(text, "x")


@pytest.mark.parametrize(("text", "blank"), [
    ("", True), (" \t\n\r", True), ("\u200b\u200d\ufeff", True),
    ("\u200b \u200c\u2060\u00a0\u3000\u2028\u00ad\u200e", True),
    ("\u200ba", False), ("\u200b.", False), ("\u0301", False), ("日", False), ("_", False),
])
def test_is_blank(text: str, blank: bool) -> None:
    assert is_blank(text) is blank
