"""The shell's completer, called with prompt-toolkit ``Document`` values (real sources)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from helpers import build_file_tree, run_cli
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from vance_cli.cli.app import app
from vance_cli.cli.shell.complete import ShellCompleter, Sources
from vance_cli.cli.shell.dispatch import Shell


@pytest.fixture()
def sources() -> Iterator[Sources]:
    root = typer.main.get_command(app)
    with root.make_context("vance", ["shell"]) as ctx:
        yield Sources(Shell(ctx, interactive=False))


def _complete(sources: Sources, text: str) -> list[tuple[str, int]]:
    completer = ShellCompleter(sources)
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.start_position) for c in found]


def _texts(sources: Sources, text: str) -> list[str]:
    return [t for t, _ in _complete(sources, text)]


def test_slash_prefix_completes_command_names(sources: Sources) -> None:
    assert _complete(sources, "/wiz") == [("/wizard", -4), ("/wizards", -4)]
    assert _texts(sources, "/") == ["/wizard", "/wizards", "/delegate", "/new", "/process",
                                    "/catalog",
                                    "/recipe", "/log", "/help", "/quit", "/exit"]
    assert _texts(sources, "/E") == ["/exit"]  # case-insensitive
    assert _texts(sources, "/nothing") == []


@pytest.mark.parametrize("text", ["Write an essay", "", "//wiz", "line\n/wiz", "/wizrd "])
def test_plain_text_and_unknown_commands_complete_nothing(sources: Sources, text: str) -> None:
    assert _texts(sources, text) == []


def test_wizard_names_come_from_the_listing(sources: Sources) -> None:
    names = _texts(sources, "/wizard ")
    assert names == ["essay-mit-recipe", "essay-recipe", "gremium", "vogon-strategie"]
    assert "create-project" not in names  # availableIn: only without a project
    assert _complete(sources, "/wizard essay-m") == [("essay-mit-recipe", -7)]
    assert _texts(sources, "/wizard gremium ") == []  # one name only
    completer = ShellCompleter(sources)
    (first,) = completer.get_completions(Document("/wizard grem"), CompleteEvent())
    assert first.display_meta_text == "Define an advisory council"


def test_wizard_listing_respects_the_project(vance_home: Path) -> None:
    root = typer.main.get_command(app)
    with root.make_context("vance", ["--project", "_tenant", "shell"]) as ctx:
        ctx.obj = _global_options(project="_tenant")
        names = _texts(Sources(Shell(ctx, interactive=False)), "/wizard ")
    assert "create-project" in names


def _global_options(**flags: str) -> object:
    from vance_cli.cli.app import GlobalOptions

    return GlobalOptions(flags=dict(flags))


def test_a_project_wizard_appears_after_refresh(sources: Sources, project_dir: Path) -> None:
    assert "mine" not in _texts(sources, "/wizard ")
    build_file_tree(project_dir, {"wizards/mine.yaml": """
        title: Mine
        promptTemplate: "Do {{ x }}"
        fields: [{name: x, type: string}]
        """})
    assert "mine" not in _texts(sources, "/wizard ")  # cached until the next prompt
    sources.refresh()
    assert "mine" in _texts(sources, "/wizard ")


def test_wizard_options_and_field_names(sources: Sources) -> None:
    assert _texts(sources, "/wizard essay-mit-recipe --") == ["--set", "--dry-run"]
    assert _texts(sources, "/wizard essay-mit-recipe --set ") == ["recipe=", "topic=",
                                                                  "audience="]
    assert _texts(sources, "/wizard essay-mit-recipe -s to") == ["topic="]
    assert _texts(sources, "/wizard --set ") == []  # no wizard named yet
    assert _texts(sources, "/wizard essay-mit-recipe --set topic=x ") == []


def test_group_subcommands_and_options(sources: Sources) -> None:
    assert _texts(sources, "/process ") == ["create", "events", "follow", "list", "messages",
                                            "prune", "result", "rm", "run", "show", "steer",
                                            "stop", "wait"]
    assert _texts(sources, "/process w") == ["wait"]
    assert _texts(sources, "/catalog ") == ["reload", "show", "validate"]
    assert "--timeout" in _texts(sources, "/process wait abc --")
    assert _texts(sources, "/process wait abc --ti") == ["--timeout"]
    assert set(_texts(sources, "/catalog reload -")) >= {"--file", "-f", "--bundled", "--json",
                                                         "--help"}
    assert _texts(sources, "/log -") == ["-n", "--limit", "--json", "--help"]
    assert _texts(sources, "/help pro") == ["process"]
    assert _texts(sources, "/delegate --d") == ["--dry-run"]
    assert _texts(sources, "/delegate write") == []


def test_process_ids_complete_after_show_wait_stop(sources: Sources) -> None:
    pid = run_cli(["process", "create", "--recipe", "translate", "--name", "fr-letter",
                   "--json"]).json()["id"]
    for sub in ("show", "wait", "stop"):
        assert _texts(sources, f"/process {sub} ") == [pid]
        assert _texts(sources, f"/process {sub} {pid[:3]}") == [pid]
    assert _texts(sources, "/process events --for ") == [pid]
    completer = ShellCompleter(sources)
    (item,) = completer.get_completions(Document("/process show "), CompleteEvent())
    assert item.display_meta_text == "fr-letter · IDLE"
    assert _texts(sources, f"/process show {pid} ") == []


def test_file_paths_complete_after_file_options(sources: Sources, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(tmp_path / "cat", {"engines-a.yaml": "x", "engines-b.yaml": "y",
                                       "other.txt": "z"})
    monkeypatch.chdir(tmp_path / "cat")
    completer = ShellCompleter(sources)
    found = list(completer.get_completions(Document("/catalog reload --file eng"),
                                           CompleteEvent(completion_requested=True)))
    assert sorted(c.display_text for c in found) == ["engines-a.yaml", "engines-b.yaml"]
    text = "/catalog validate o"
    (item,) = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    assert Document(text).text[:len(text) + item.start_position] + item.text == \
        "/catalog validate other.txt"
