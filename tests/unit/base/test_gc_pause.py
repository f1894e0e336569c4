"""The collector pause around bulk loads (base/gc_pause.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import build_file_tree

from vance_cli.base.config import load_settings
from vance_cli.base.gc_pause import collector_paused
from vance_cli.documents.cascade import Kind
from vance_cli.wizards import loader
from vance_cli.wizards.loader import lint_cascade, load_cascade
from vance_cli.workspace import Workspace

GOOD = "title: Good\nfields: []\npromptTemplate: hello\n"


@pytest.fixture
def collector_on() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


def test_the_collector_is_off_inside_and_on_again_after(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector_on: None) -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_wizard_listings_and_lint_load_with_the_collector_paused(
        project_dir: Path, monkeypatch: pytest.MonkeyPatch, collector_on: None) -> None:
    build_file_tree(project_dir, {"wizards/good.yaml": GOOD})
    seen: list[bool] = []
    real = loader.load_outcome

    def load_outcome(*args: object, **kwargs: object) -> loader.LoadOutcome:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "load_outcome", load_outcome)
    cascade = Workspace(load_settings()).cascade(Kind.WIZARDS)
    assert load_cascade(cascade).ok and gc.isenabled()
    assert lint_cascade(cascade).ok and gc.isenabled()
    assert seen and not any(seen)
