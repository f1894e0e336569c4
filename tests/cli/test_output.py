"""``cli/output.py``: control characters made visible, values for people, tables on a terminal."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator

import pytest

from vance_cli.cli import output


class _Tty(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _fresh_consoles() -> Iterator[None]:
    output.console.cache_clear()
    output.err_console.cache_clear()
    yield
    output.console.cache_clear()
    output.err_console.cache_clear()


def terminal(monkeypatch: pytest.MonkeyPatch, columns: int = 80,
             stderr: bool = True) -> tuple[_Tty, io.StringIO]:
    """Make stdout (and stderr) a terminal of ``columns`` without colours (TERM=dumb).

    Called inside the test: pytest puts its own capture back between setup and call.
    """
    out, err = _Tty(), (_Tty() if stderr else io.StringIO())
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    return out, err


RED = "\x1b[31mred\x1b[0m"


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[31m", "␛[31m"),
    ("a\x00b", "a␀b"),
    ("bell\x07", "bell␇"),
    ("cr\rover", "cr␍over"),
    ("del\x7f", "del␡"),
    ("csi\x9b2J", "csi\\x9b2J"),
    ("keep\nlines\tand tabs", "keep\nlines\tand tabs"),
])
def test_visible_replaces_control_characters(raw: str, shown: str) -> None:
    assert output.visible(raw) == shown


def test_visible_without_layout_replaces_newline_and_tab_too() -> None:
    assert output.visible("a\nb\tc", keep_layout=False) == "a␊b␉c"


def test_fields_show_untrusted_text_visibly(monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)
    output.fields([("rationale", f"picked it {RED} [bold]x[/bold]"), ("lab\x1bel", "v")])
    text = out.getvalue()
    assert "\x1b" not in text
    assert "picked it ␛[31mred␛[0m [bold]x[/bold]" in text and "lab␛el: v" in text


def test_table_on_a_terminal_shows_untrusted_cells_visibly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)
    output.table(None, ("id", "task"), [("1", f"task {RED}"), ("\x9b2", "x")],
                 one_line=("task",))
    text = out.getvalue()
    assert "\x1b" not in text and "\x9b" not in text
    assert "task ␛[31mred␛[0m" in text and "\\x9b2" in text


def test_piped_table_shows_untrusted_cells_visibly(capsys: pytest.CaptureFixture[str]) -> None:
    output.table(None, ("id", "task"), [("1", f"a {RED}\tb\nc")])
    assert capsys.readouterr().out == "1\ta ␛[31mred␛[0m b c\n"


def test_diagnostic_lines_show_untrusted_parts_visibly(capsys: pytest.CaptureFixture[str]) -> None:
    output.warn(f"recipe '{RED}' left out")
    output.error("bad \x1b]0;title\x07 name")
    output.info("line one\nline \x1bc two")
    output.say(f"event {RED}")
    captured = capsys.readouterr()
    assert "\x1b" not in captured.err + captured.out
    assert captured.err == ("vance: warning: recipe '␛[31mred␛[0m' left out\n"
                            "vance: error: bad ␛]0;title␇ name\n"
                            "line one\nline ␛c two\n")
    assert captured.out == "event ␛[31mred␛[0m\n"


def test_json_output_stays_exact(capsys: pytest.CaptureFixture[str]) -> None:
    output.emit_json({"task": RED})
    output.emit_text(f"prompt {RED}")
    out = capsys.readouterr().out
    assert '"task": "\\u001b[31mred\\u001b[0m"' in out
    assert out.endswith(f"prompt {RED}\n")
