from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import build_file_tree

from vance_cli.base import files
from vance_cli.base.config import load_settings
from vance_cli.base.errors import DocumentError, InvalidDocumentName
from vance_cli.base.names import check_name, close_matches
from vance_cli.documents import cascade
from vance_cli.documents.cascade import (
    Cascade,
    DirectoryLayer,
    DocumentRef,
    Kind,
    Layer,
    read_text,
)
from vance_cli.workspace import Workspace


@pytest.mark.parametrize("name", ["essay", "a/b", "_slart/2026-x/news.letter", "A_b-c.d"])
def test_valid_names(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("..", "'..'"),
        ("a/../b", "'..'"),
        ("a//b", "empty segment"),
        ("a/", "empty segment"),
        ("./a", "'.'"),
        ("a b", "character"),
        ("a\\b", "character"),
        ("C:/x", "absolute"),
        ("tee\n", "character"),
    ],
)
def test_invalid_names(name: str, problem: str) -> None:
    with pytest.raises(InvalidDocumentName, match=problem):
        check_name(name)


def test_cascade_first_layer_wins_and_listing_reports_origin(tmp_path: Path) -> None:
    build_file_tree(tmp_path, {
        "p/recipes/a.yaml": "x: p", "p/recipes/sub/c.yaml": "x: p",
        "t/recipes/a.yaml": "x: t", "t/recipes/b.yaml": "x: t",
        "t/recipes/bad name.yaml": "x: t", "t/recipes/.hidden.yaml": "x: t",
        "t/recipes/notes.txt": "x",
    })
    cascade = Cascade(Kind.RECIPES, (DirectoryLayer(Layer.PROJECT, tmp_path / "p"),
                                     DirectoryLayer(Layer.VANCE, tmp_path / "t"),
                                     DirectoryLayer(Layer.RESOURCE, tmp_path / "missing")))
    found = cascade.find("a")
    assert found is not None and found.layer is Layer.PROJECT
    assert cascade.find("b").layer is Layer.VANCE  # type: ignore[union-attr]
    assert cascade.find("nope") is None
    listing = {ref.name: ref.layer for ref in cascade.list()}
    assert listing == {"a": Layer.PROJECT, "b": Layer.VANCE, "sub/c": Layer.PROJECT}
    with pytest.raises(InvalidDocumentName):
        cascade.find("../p/recipes/a")


def test_dot_vance_folder_is_found_from_a_subfolder(tmp_path: Path, vance_home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    build_file_tree(tmp_path, {"repo/.vance/recipes/local.yaml": "engine: ford\n"})
    sub = tmp_path / "repo" / "src" / "deep"
    sub.mkdir(parents=True)
    settings = load_settings(environ={"VANCE_HOME": str(vance_home)})
    ws = Workspace(settings, cwd=sub)
    assert ws.project_folder == (tmp_path / "repo" / ".vance").resolve()
    assert ws.cascade(Kind.RECIPES).find("local").layer is Layer.PROJECT  # type: ignore[union-attr]


def test_vance_home_named_dot_vance_is_not_a_project(tmp_path: Path) -> None:
    home = tmp_path / "u" / ".vance"
    home.mkdir(parents=True)
    settings = load_settings(environ={"VANCE_HOME": str(home)})
    ws = Workspace(settings, cwd=tmp_path / "u")
    assert ws.project_folder == settings.paths.project_dir("default", "default")


def test_layers_per_kind(vance_home: Path) -> None:
    settings = load_settings(environ={"VANCE_HOME": str(vance_home)})
    ws = Workspace(settings)
    assert [l.layer for l in ws.layers(Kind.RECIPES)] == [Layer.PROJECT, Layer.VANCE,
                                                            Layer.RESOURCE]
    assert [l.layer for l in ws.layers(Kind.WIZARDS)] == [Layer.PROJECT, Layer.USER,
                                                            Layer.VANCE, Layer.RESOURCE]
    no_project = Workspace(load_settings(flags={"project": "_tenant"},
                                         environ={"VANCE_HOME": str(vance_home)}))
    assert [l.layer for l in no_project.layers(Kind.RECIPES)] == [Layer.VANCE, Layer.RESOURCE]
    assert no_project.availability_id == "_tenant"


def test_close_matches() -> None:
    names = ["essay-pipeline", "web-research", "translate", "coding", "code-read"]
    assert close_matches("essay", names)[0] == "essay-pipeline"
    assert close_matches("codng", names)[0] == "coding"
    assert close_matches("zzz", names) == []


def test_listing_skips_bad_folders_and_files_below_them(tmp_path: Path) -> None:
    build_file_tree(tmp_path, {
        "recipes/team-a/ok.yaml": "x: 1", "recipes/team-a/deep/er.yaml": "x: 1",
        "recipes/bad dir/hidden-by-dir.yaml": "x: 1", "recipes/bad dir/sub/also.yaml": "x: 1",
        "recipes/.git/inside.yaml": "x: 1", "recipes/team-a/not-yaml.txt": "x",
        "recipes/team-a/sp ace.yaml": "x: 1", "recipes/top.yaml": "x: 1",
    })
    layer = DirectoryLayer(Layer.PROJECT, tmp_path)
    found = list(layer.iter_documents(Kind.RECIPES))
    assert [name for name, _path in found] == ["team-a/deep/er", "team-a/ok", "top"]
    assert all(path.is_file() and path.is_absolute() for _name, path in found)


@pytest.fixture()
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled, so read_text keeps its text from the first read."""
    monkeypatch.setattr(cascade, "SETTLED_NS", -1)


def test_read_text_gives_a_settled_file_again_until_it_changes(
        tmp_path: Path, settled_at_once: None, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []
    read_limited = files.read_limited

    def counted(path: Path, *args: Any) -> bytes:
        reads.append(path)
        return read_limited(path, *args)

    monkeypatch.setattr(files, "read_limited", counted)
    prompt = tmp_path / "layer" / "prompts" / "p.md"
    prompt.parent.mkdir(parents=True)
    prompt.write_text("first", encoding="utf-8")
    ref = DocumentRef("p", Layer.VANCE, prompt, tmp_path / "layer")
    assert read_text(ref) == "first"
    assert read_text(ref) == "first"
    assert len(reads) == 1  # the second time from memory
    prompt.write_text("second, longer", encoding="utf-8")
    assert read_text(ref) == "second, longer"
    assert len(reads) == 2
    prompt.unlink()
    with pytest.raises(DocumentError, match="cannot read"):
        read_text(ref)


def test_read_text_refuses_a_kept_file_that_became_a_link_out_of_its_layer(
        tmp_path: Path, settled_at_once: None) -> None:
    layer = tmp_path / "layer"
    prompt = layer / "prompts" / "p.md"
    prompt.parent.mkdir(parents=True)
    prompt.write_text("inside", encoding="utf-8")
    ref = DocumentRef("p", Layer.VANCE, prompt, layer)
    assert read_text(ref) == "inside"
    outside = tmp_path / "secret.md"
    outside.write_text("inside", encoding="utf-8")  # the same text, elsewhere
    prompt.unlink()
    prompt.symlink_to(outside)
    with pytest.raises(DocumentError, match="outside its layer"):
        read_text(ref)
