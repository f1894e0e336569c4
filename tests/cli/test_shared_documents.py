"""A shared folder (``documents.shared``) as the tenant layer, seen by two users with homes of
their own: recipes, wizards and the engine catalog (docs/teams.md#shared-documents)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, CliResult, build_file_tree, run_cli

TEA = """
    title: Team tea
    engine: ford
    description: Brew the team's tea by the team's own rules.
    triggers: {keywords: [teamtea]}
    """

FORM = """
    title: Team form
    description: {en: The team's own form}
    promptTemplate: "Team: {{ topic }}"
    fields: [{name: topic, type: string, required: true}]
    """


@dataclass
class Member:
    """One user: a home of their own, configured with the shared folder."""

    name: str
    home: Path

    def __call__(self, *args: str) -> CliResult:
        """Run ``vance --home HOME ARGS`` as this member."""
        return run_cli(["--home", str(self.home), *args])

    def json(self, *args: str) -> Any:
        """Run a ``--json`` command that must succeed; return its document."""
        result = self(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return result.json()

    @property
    def project(self) -> Path:
        """This member's own project layer (project ``default``)."""
        return self.home / "data" / "tenants" / "default" / "projects" / "default"

    @property
    def user_layer(self) -> Path:
        """This member's own wizard layer (``_user_<name>``)."""
        return self.home / "data" / "tenants" / "default" / "projects" / f"_user_{self.name}"


@pytest.fixture()
def shared(tmp_path: Path) -> Path:
    """The team's shared folder (a checkout): a recipe, a wizard, nothing else yet."""
    folder = tmp_path / "team-docs"
    build_file_tree(folder, {"recipes/team-tea.yaml": TEA, "wizards/team-form.yaml": FORM})
    return folder


@pytest.fixture()
def members(tmp_path: Path, shared: Path) -> tuple[Member, Member]:
    """Anna and Ben, each with a home and a config of their own, both on ``shared``."""
    out = []
    for name in ("anna", "ben"):
        member = Member(name, tmp_path / f"home-{name}")
        assert member("config", "set", "user", name).exit_code == 0
        assert member("config", "set", "documents.shared", str(shared)).exit_code == 0
        out.append(member)
    return out[0], out[1]


def _layers(listing: list[dict[str, Any]]) -> dict[str, str]:
    return {entry["name"]: entry["layer"] for entry in listing}


def test_both_members_see_the_shared_recipe_and_wizard(members: tuple[Member, Member],
                                                       shared: Path) -> None:
    for member in members:
        config = member.json("config", "show")
        assert config["documents.shared"] == {"value": str(shared), "origin": "file"}
        assert config["user"]["value"] == member.name
        recipes = _layers(member.json("recipe", "list"))
        assert recipes["team-tea"] == "VANCE" and recipes["translate"] == "RESOURCE"
        shown = member.json("recipe", "show", "team-tea")
        assert shown["path"] == str(shared / "recipes" / "team-tea.yaml")
        assert _layers(member.json("wizard", "list"))["team-form"] == "VANCE"
        rendered = member.json("wizard", "render", "team-form", "--set", "topic=tea")
        assert rendered["prompt"].startswith("Team: tea")
    # the selector picks the shared recipe (no LLM configured) and starts it
    anna, ben = members
    started = anna.json("delegate", "--task", "Make the teamtea for Monday")
    assert (started["decision"], started["recipe"], started["engine"]) == (
        "MATCH", "team-tea", "ford")
    assert "trigger keyword 'teamtea'" in started["rationale"]
    assert [p["recipe"] for p in anna.json("process", "list")] == ["team-tea"]
    assert ben.json("process", "list") == []  # each home keeps its own state
    decided = ben.json("delegate", "--dry-run", "--task", "Brew the tea by the team's rules")
    assert (decided["decision"], decided["recipe"]) == ("MATCH", "team-tea")
    assert "offline" in decided["rationale"]


def test_a_document_added_to_the_shared_folder_reaches_both(members: tuple[Member, Member],
                                                            shared: Path) -> None:
    anna, ben = members
    assert "team-coffee" not in _layers(anna.json("recipe", "list"))  # listed (and cached) once
    build_file_tree(shared, {  # a git pull brings a recipe, a wizard and a prompt
        "recipes/team-coffee.yaml": TEA.replace("Team tea", "Team coffee").replace(
            "teamtea", "teamcoffee"),
        "wizards/team-review.yaml": FORM.replace("Team form", "Team review"),
    })
    for member in members:
        assert _layers(member.json("recipe", "list"))["team-coffee"] == "VANCE"
        assert _layers(member.json("wizard", "list"))["team-review"] == "VANCE"
    decided = ben.json("delegate", "--dry-run", "--task", "a teamcoffee for two")
    assert (decided["decision"], decided["recipe"]) == ("MATCH", "team-coffee")


def test_a_member_s_own_layer_overrides_the_shared_one_for_that_member_only(
        members: tuple[Member, Member], shared: Path) -> None:
    anna, ben = members
    build_file_tree(anna.project, {
        "recipes/team-tea.yaml": TEA.replace("the team's own rules", "Anna's own rules")})
    build_file_tree(anna.user_layer, {
        "wizards/team-form.yaml": FORM.replace('"Team: {{ topic }}"', '"Anna: {{ topic }}"')})

    mine = anna.json("recipe", "show", "team-tea")
    assert (mine["layer"], mine["description"]) == ("PROJECT", "Brew the team's tea by Anna's"
                                                               " own rules.")
    assert _layers(anna.json("wizard", "list"))["team-form"] == "USER"
    assert anna.json("wizard", "render", "team-form", "--set", "topic=x")["prompt"].startswith(
        "Anna: x")

    theirs = ben.json("recipe", "show", "team-tea")
    assert (theirs["layer"], theirs["path"]) == ("VANCE", str(shared / "recipes/team-tea.yaml"))
    assert _layers(ben.json("wizard", "list"))["team-form"] == "VANCE"
    assert ben.json("wizard", "render", "team-form", "--set", "topic=x")["prompt"].startswith(
        "Team: x")


def test_a_broken_shared_document_hides_no_other(members: tuple[Member, Member],
                                                 shared: Path) -> None:
    build_file_tree(shared, {
        "recipes/broken.yaml": "engine: [unclosed\n",
        "recipes/no-engine.yaml": "title: No engine\ndescription: lacks its engine\n",
        "wizards/broken.yaml": "title: Broken\npromptTemplate: '{% for x in y %}no end'\n",
    })
    for member in members:
        listed = member("recipe", "list", "--json")
        assert listed.exit_code == 0
        recipes = _layers(listed.json())
        assert recipes["team-tea"] == "VANCE" and "translate" in recipes
        assert "broken" not in recipes and "no-engine" not in recipes
        assert "recipe 'broken' left out" in listed.stderr
        assert str(shared / "recipes" / "broken.yaml") in listed.stderr
        wizards = member("wizard", "list", "--json")
        assert wizards.exit_code == 0 and "team-form" in _layers(wizards.json())
        assert "broken" not in _layers(wizards.json()) and "gremium" in _layers(wizards.json())
        assert "broken" in wizards.stderr
        lint = member("wizard", "lint")
        assert lint.exit_code == 1 and "broken\tVANCE\tBROKEN: " in lint.stdout
        assert "team-form\tVANCE\tOK" in lint.stdout
        decided = member.json("delegate", "--dry-run", "--task", "teamtea please")
        assert decided["recipe"] == "team-tea"


def _catalog_text(**changes: str) -> str:
    """The bundled catalog with a ford purpose of the team's own, or other changes."""
    text = (REPO / "catalog" / "engines.yaml").read_text(encoding="utf-8")
    for old, new in changes.items():
        text = text.replace(old, new)
    return text


def test_the_shared_catalog_is_reloaded_by_each_member_and_a_broken_one_never_activates(
        members: tuple[Member, Member], shared: Path) -> None:
    anna, ben = members
    catalog = shared / "catalog" / "engines.yaml"
    build_file_tree(shared, {"catalog/engines.yaml": _catalog_text(
        **{"A generalist single worker": "The team's generalist worker"})})

    pending = ben.json("catalog", "show")  # configured, not active: nothing changes by itself
    assert (pending["source"], pending["configuredFile"], pending["reloadPending"]) == (
        "bundled", str(catalog), True)
    human = ben("catalog", "show")
    assert f"the shared catalog {catalog} differs from the active catalog" in human.stderr

    reloaded = anna.json("catalog", "reload")
    assert reloaded["activated"] is True and reloaded["active"]["source"] == str(catalog)
    active = anna.json("catalog", "show")
    assert active["reloadPending"] is False
    ford = next(e for e in active["engines"] if e["name"] == "ford")
    assert ford["purpose"].startswith("The team's generalist worker")
    assert ben.json("catalog", "show")["source"] == "bundled"  # Ben's home: his own reload

    # a broken catalog arrives in the shared folder: a reload refuses it, the last one stays
    build_file_tree(shared, {"catalog/engines.yaml": "engines:\n  ford: [unclosed\n"})
    refused = anna("catalog", "reload")
    assert refused.exit_code == 1
    assert f"{catalog}:" in refused.stderr
    assert f"catalog not reloaded; still active: {catalog}" in refused.stderr
    after = anna.json("catalog", "show")
    assert (after["sha256"], after["activatedAt"]) == (active["sha256"], active["activatedAt"])
    assert after["reloadPending"] is True
    assert anna.json("delegate", "--dry-run", "--task", "teamtea please")["engine"] == "ford"
    assert ben("catalog", "reload").exit_code == 1
    assert ben.json("catalog", "show")["source"] == "bundled"

    # one that drops the engine a shared recipe runs on is refused too (the orphan rule)
    build_file_tree(shared, {"catalog/engines.yaml": _catalog_text().replace(
        "\n  ford:", "\n  fjord:")})
    orphaned = anna("catalog", "reload")
    assert orphaned.exit_code == 1
    assert f"recipe 'team-tea' (VANCE, {shared / 'recipes' / 'team-tea.yaml'})" in (
        orphaned.stderr)
    assert anna.json("catalog", "show")["sha256"] == active["sha256"]


def test_catalog_file_wins_over_the_shared_catalog(members: tuple[Member, Member],
                                                   shared: Path, tmp_path: Path) -> None:
    anna, _ = members
    build_file_tree(shared, {"catalog/engines.yaml": _catalog_text()})
    own = tmp_path / "own-engines.yaml"
    own.write_text(_catalog_text(**{"A generalist single worker": "Anna's worker"}),
                   encoding="utf-8")
    assert anna("config", "set", "catalog.file", str(own)).exit_code == 0
    assert anna.json("catalog", "show")["configuredFile"] == str(own)
    assert anna.json("catalog", "reload")["active"]["source"] == str(own)


def test_without_a_shared_catalog_reload_names_where_one_would_go(
        members: tuple[Member, Member], shared: Path) -> None:
    result = members[0]("catalog", "reload")
    assert result.exit_code == 2
    assert f"or put catalog/engines.yaml into the shared folder {shared}" in result.stderr


def test_tenant_level_writes_go_to_the_shared_folder(members: tuple[Member, Member],
                                                     shared: Path) -> None:
    anna, ben = members
    promoted = anna.json("--project", "_tenant", "recipe", "promote", "team-tea", "tea-daily")
    assert promoted["path"] == str(shared / "recipes" / "tea-daily.yaml")
    assert _layers(ben.json("recipe", "list"))["tea-daily"] == "VANCE"


def test_a_missing_shared_folder_is_a_warning(members: tuple[Member, Member],
                                              tmp_path: Path) -> None:
    anna, _ = members
    gone = tmp_path / "not-cloned-yet"
    assert anna("config", "set", "documents.shared", str(gone)).exit_code == 0
    result = anna("recipe", "list", "--json")
    assert result.exit_code == 0 and "team-tea" not in _layers(result.json())
    assert f"documents.shared {gone} is not a folder" in result.stderr


def test_without_the_setting_the_tenant_layer_is_the_home_s_own(
        members: tuple[Member, Member], shared: Path) -> None:
    anna, _ = members
    build_file_tree(anna.home / "data/tenants/default/projects/_tenant",
                    {"recipes/local-only.yaml": TEA.replace("teamtea", "localtea")})
    assert "local-only" not in _layers(anna.json("recipe", "list"))  # replaced by the shared
    assert anna("config", "set", "documents.shared", "").exit_code == 0
    recipes = _layers(anna.json("recipe", "list"))
    assert recipes["local-only"] == "VANCE" and "team-tea" not in recipes
