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


def terminal(monkeypatch: pytest.MonkeyPatch) -> tuple[_Tty, _Tty]:
    """Make stdout (and stderr) an 80-column terminal without colours (TERM=dumb, COLUMNS=80).

    Called inside the test: pytest puts its own capture back between setup and call.
    """
    out, err = _Tty(), _Tty()
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("COLUMNS", "80")  # else Rich asks the real terminal, if there is one
    monkeypatch.setenv("LINES", "25")
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
    assert out.startswith('{"task":"\\u001b[31mred\\u001b[0m"}\n')  # piped: one line
    assert out.endswith(f"prompt {RED}\n")


# --- values, tables and captions for people -------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), [
    (None, ""), (True, "true"), (False, "false"), (0, "0"), ("text", "text"),
    ({"confirm": True, "n": None}, '{"confirm": true, "n": null}'), ([1, "a"], '[1, "a"]'),
    ((), "[]"), ({}, "{}"),
])
def test_display_shows_values_for_people(value: object, shown: str) -> None:
    assert output.display(value) == shown


def test_fields_and_tables_use_one_formatter(monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)
    output.fields([("internal", False), ("params", {"confirm": True}), ("none", None)])
    output.table(None, ("key", "value"), [("log.tasks", True), ("x", None)])
    text = out.getvalue()
    assert "internal: false\nparams: {\"confirm\": true}\nnone: \n" in text
    assert "log.tasks │ true" in text
    assert "False" not in text and "True" not in text and "None" not in text


def test_identifier_columns_do_not_wrap_free_text_takes_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)
    long_text = "a description long enough to need several lines in an eighty column table " * 2
    output.table(None, ("name", "engine", "layer", "description"),
                 [("council-three-perspectives", "slartibartfast", "RESOURCE", long_text)],
                 text=("description",))
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any("council-three-perspectives" in line and "slartibartfast" in line
               for line in lines)


def test_identifiers_are_cut_with_an_ellipsis_only_when_the_terminal_is_too_narrow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)  # TERM=dumb: Rich renders 80 columns
    name, engine = "council-three-perspectives-" * 2, "slartibartfast-" * 3
    output.table(None, ("name", "engine"), [(name, engine)])
    text = out.getvalue()
    assert "…" in text and name not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert len([line for line in text.splitlines() if line.startswith("│")]) == 1  # no wrap


def test_a_one_line_column_shows_line_breaks_as_a_symbol(monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)
    output.table(None, ("id", "task"), [("1", "first line\r\nsecond\n\n  third")],
                 one_line=("task",))
    rows = [line for line in out.getvalue().splitlines() if line.startswith("│")]
    assert len(rows) == 1 and "first line ⏎ second ⏎ third" in rows[0]


def test_grouped_column_is_blank_below_its_first_row_on_a_terminal_only(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [("Team", "gremium"), ("Team", "vogon-strategie"), ("Texts", "essay-recipe")]
    output.table(None, ("category", "name"), rows, group=("category",))
    piped = capsys.readouterr().out
    assert [line.split("\t")[0] for line in piped.splitlines()] == ["Team", "Team", "Texts"]
    out, _ = terminal(monkeypatch)
    output.table(None, ("category", "name"), rows, group=("category",))
    body = [line for line in out.getvalue().splitlines() if "│" in line and "name" not in line]
    assert [line.split("│")[1].strip() for line in body] == ["Team", "", "Texts"]


@pytest.mark.parametrize("stderr_is_terminal", [True, False])
def test_piped_caption_goes_to_stderr_only_when_it_is_a_terminal(
        monkeypatch: pytest.MonkeyPatch, stderr_is_terminal: bool) -> None:
    out, err = io.StringIO(), (_Tty() if stderr_is_terminal else io.StringIO())
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    output.table("Title", ("a",), [("x",)], caption="1 recipe")
    output.warn("still shown")
    assert out.getvalue() == "x\n"
    shown = "Title\n1 recipe\n" if stderr_is_terminal else ""
    assert err.getvalue() == shown + "vance: warning: still shown\n"


def test_shrink_columns_give_way_first_so_the_id_stays_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)  # TERM=dumb: 80 columns
    ident, name = "83d1ec0a00406a1b", "write-a-short-essay-about-the-history-of-23ddc4"
    output.table(None, ("id", "name", "recipe", "engine", "status", "created"),
                 [(ident, name, "essay-pipeline", "vogon", "IDLE", "11-30 03:47")],
                 shrink=("name", "recipe"))
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    header, row = (line for line in lines if line.startswith(("│", "┃")))  # nothing wraps
    for whole in ("id", "engine", "status", "created"):
        assert whole in header
    for whole in (ident, "vogon", "IDLE", "11-30 03:47"):
        assert whole in row
    assert "write-a-s" in row and name not in row  # the name gave way first


def test_shrink_changes_nothing_when_the_row_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)
    output.table(None, ("id", "name"), [("1", "a-name-that-fits")], shrink=("name",))
    assert "a-name-that-fits" in out.getvalue() and "…" not in out.getvalue()


def test_shrink_counts_terminal_cells_not_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = terminal(monkeypatch)  # 80 columns
    # 16 letters fit the row by count, but they take 32 cells
    ident, name = "e5bab2179e7d4c21", "東京の天気について短い文章を書く"
    assert len(name) == 16
    output.table(None, ("id", "name", "recipe", "engine", "status", "created"),
                 [(ident, name, "essay", "vogon", "IDLE", "11-30 03:47")],
                 shrink=("name", "recipe"))
    row = next(line for line in out.getvalue().splitlines() if line.startswith("│"))
    assert ident in row and name not in row


def test_times_are_short_on_a_terminal_and_exact_when_piped(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stamp = "2026-11-30T03:47:19.822Z"
    output.table(None, ("id", "created (UTC)"), [("a1", stamp)], times=("created (UTC)",))
    assert capsys.readouterr().out == f"a1\t{stamp}\n"
    out, _ = terminal(monkeypatch)
    output.table(None, ("id", "created (UTC)"), [("a1", stamp)], times=("created (UTC)",))
    assert "11-30 03:47" in out.getvalue() and stamp not in out.getvalue()
    assert output.short_time("not a time") == "not a time"


@pytest.mark.timeout(10)
def test_a_huge_one_line_cell_is_cut_before_it_is_measured(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _err = terminal(monkeypatch)
    task = "Summarize this\n" + "a line of the transcript, with\ta tab\n" * 500_000  # 19 MB
    output.table(None, ("id", "task"), [("1", task)], one_line=("task",))
    shown = out.getvalue()
    assert "Summarize this ⏎ a line of the transcript" in shown and "…" in shown


def test_headers_follow_the_session_language(monkeypatch: pytest.MonkeyPatch) -> None:
    from vance_cli.cli import words

    out, _ = terminal(monkeypatch)
    words.set_language("de")
    try:
        output.table(None, ("id", "recipe", "created (UTC)"), [("1", "coding", "x")])
    finally:
        words.set_language("en")
    assert "Rezept" in out.getvalue() and "erstellt (UTC)" in out.getvalue()


def test_cancelled_is_said_in_the_session_language(monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import run_cli

    from vance_cli.cli.commands import process

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(process, "list_processes", interrupted)
    german = run_cli(["--lang", "de", "process", "list"])
    assert (german.exit_code, german.stderr.strip()) == (130, "abgebrochen")
    english = run_cli(["process", "list"])
    assert (english.exit_code, english.stderr.strip()) == (130, "cancelled")


def test_json_is_one_line_piped_and_indented_on_a_terminal(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    document = {"decision": "MATCH", "process": {"id": "a1", "params": {}}}
    output.emit_json(document)
    piped = capsys.readouterr().out
    assert piped == '{"decision":"MATCH","process":{"id":"a1","params":{}}}\n'
    out, _err = terminal(monkeypatch)
    output.emit_json(document)
    assert out.getvalue().startswith('{\n  "decision": "MATCH",\n  "process": {\n')


def test_no_emoji_markup_leaks_into_output() -> None:
    """Issue 26: ``:warning:`` in a reply showed as an emoji in ``process show``."""
    from vance_cli.cli import output

    output.console.cache_clear()
    output.err_console.cache_clear()
    assert not output.console()._emoji and not output.err_console()._emoji
    with output.console().capture() as captured:
        output.console().print(":warning: check the :smile: logs")
    assert captured.get() == ":warning: check the :smile: logs\n"
