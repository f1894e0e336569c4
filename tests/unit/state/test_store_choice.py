"""``state.url`` chooses the store: unset or ``sqlite://`` is the file in the state folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_cli

from vance_cli.base.config import load_settings
from vance_cli.base.errors import ConfigError
from vance_cli.state.db import SqliteDatabase
from vance_cli.state.stores import open_state

pytestmark = pytest.mark.sqlite_only  # about choosing a store, not about one


def test_unset_and_sqlite_scheme_mean_the_file_in_the_state_folder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    default = load_settings()
    assert default.state_url is None and not default.team
    assert default.state_target == default.paths.db_file
    monkeypatch.setenv("VANCE_STATE_URL", "sqlite://")
    assert load_settings().state_target == default.paths.db_file


def test_sqlite_url_with_a_path_names_another_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "elsewhere" / "team.db"
    monkeypatch.setenv("VANCE_STATE_URL", f"sqlite://{target}")
    settings = load_settings()
    assert settings.state_target == target and not settings.team
    result = run_cli(["migrate"])
    assert result.exit_code == 0 and f"state database {target}: applied m001_processes" in \
        result.stdout
    db = open_state(settings.state_target)
    assert isinstance(db, SqliteDatabase)
    db.close()


def test_postgresql_url_is_team_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_STATE_URL", "postgresql://ann:pw@db.example:5432/vance")
    settings = load_settings()
    assert settings.team and settings.state_target == "postgresql://ann:pw@db.example:5432/vance"
    shown = dict((key, value) for key, value, _ in settings.display_items())
    assert shown["state.url"] == "postgresql://ann:****@db.example:5432/vance"


@pytest.mark.parametrize("url", ["mysql://db/vance", "sqlite:relative.db", "sqlite://host/x.db",
                                 "vance.db"])
def test_other_urls_are_refused(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_STATE_URL", url)
    with pytest.raises(ConfigError, match=r"state\.url"):
        load_settings()


def test_sqlite_run_migrates_itself_on_open_as_before(tmp_path: Path) -> None:
    result = run_cli(["process", "list", "--json"])
    assert result.exit_code == 0, result.stderr
    again = run_cli(["migrate"])
    assert again.exit_code == 0 and again.stdout.endswith(": up to date\n")
