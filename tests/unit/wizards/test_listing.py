"""availableIn, grouping and ordering of the wizard listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from vance_cli.documents.cascade import Layer
from vance_cli.wizards.listing import glob_matches, group_wizards, is_available, wizard_details
from vance_cli.wizards.loader import LoadedWizard, parse_wizard

# (patterns, project id, visible)
AVAILABILITY = [
    ([], "default", True),                                   # missing/empty: everywhere
    ([], "_tenant", True),
    (["_user_*", "_tenant"], "_tenant", True),
    (["_user_*", "_tenant"], "_user_anna", True),
    (["_user_*", "_tenant"], "default", False),
    (["_user_*", "_tenant"], "_user_", True),                # * matches an empty run
    (["*"], "a/b", False),                                   # * never crosses /
    (["team/*"], "team/alpha", True),
    (["team/*"], "team/alpha/x", False),
    (["!demo-*"], "demo-1", False),                          # excludes only: * implied
    (["!demo-*"], "prod", True),
    (["web-*", "!web-legacy"], "web-shop", True),
    (["web-*", "!web-legacy"], "web-legacy", False),         # exclude wins
    (["web-*", "!web-legacy"], "api", False),
    (["default"], "default-2", False),                       # whole-id match
    (["a.b"], "axb", False),                                 # '.' is literal
    (["[x]"], "[x]", True),                                  # brackets are literal
    (["!_tenant"], "_tenant", False),                        # no project → "_tenant"
]


@pytest.mark.parametrize(("patterns", "project", "visible"), AVAILABILITY)
def test_available_in(patterns: list[str], project: str, visible: bool) -> None:
    assert is_available(patterns, project) is visible


def test_glob_star_is_any_run_without_slash() -> None:
    assert glob_matches("a*c", "abbbc") and glob_matches("a*c", "ac")
    assert not glob_matches("a*c", "ab/c")


def _wizard(name: str, title: dict[str, str], category: object = None,
            available: list[str] | None = None) -> LoadedWizard:
    data: dict[str, object] = {"title": title, "fields": [], "promptTemplate": "x"}
    if category is not None:
        data["category"] = category
    if available is not None:
        data["availableIn"] = available
    return parse_wizard(data, name, Layer.RESOURCE, Path(f"{name}.yaml"))


TOOLS = {"en": "Tools", "de": "Werkzeuge"}
WIZARDS = [
    _wizard("zeta", {"en": "Alpha tool", "de": "Zeta-Werkzeug"}, TOOLS),
    _wizard("beta", {"en": "beta tool", "de": "Beta-Werkzeug"}, TOOLS),
    _wizard("loose", {"en": "Loose"}),
    _wizard("admin", {"en": "Admin"}, "Admin", ["_tenant"]),
    _wizard("writer", {"en": "Writer"}, {"en": "Writing", "de": "Schreiben"}),
]


def test_grouped_by_category_then_title_in_the_session_language() -> None:
    en = [(g.category, [w.name for w in g.wizards])
          for g in group_wizards(WIZARDS, "default", "en")]
    assert en == [("Tools", ["zeta", "beta"]), ("Writing", ["writer"]), ("", ["loose"])]
    de = [(g.category, [w.name for w in g.wizards])
          for g in group_wizards(WIZARDS, "_tenant", "de")]
    assert de == [("Admin", ["admin"]), ("Schreiben", ["writer"]),
                  ("Werkzeuge", ["beta", "zeta"]), ("", ["loose"])]


def test_category_filter_matches_any_language_case_insensitively() -> None:
    for wanted in ("werkzeuge", "TOOLS"):
        groups = group_wizards(WIZARDS, "default", "en", category=wanted)
        assert [w.name for g in groups for w in g.wizards] == ["zeta", "beta"]


def test_show_details_carry_fields_but_never_templates() -> None:
    wizard = parse_wizard({
        "title": "T", "promptTemplate": "SECRET TEMPLATE {{ a }}",
        "validatorPrompt": "SECRET VALIDATOR",
        "fields": [{"name": "a", "type": "select", "choices": ["x", {"value": "y", "label": "Y"}],
                    "defaultValue": "x"},
                   {"name": "pw", "type": "password", "defaultValue": "hunter2"},
                   {"name": "r", "type": "repeat", "max": 2,
                    "item": [{"name": "b", "type": "integer", "integerMin": 1}]}],
        "suggestedFollowUps": [{"wizard": "n", "label": "SECRET {{ a }}",
                                "prefill": {"k": "SECRET"}}],
    }, "w", Layer.PROJECT, Path("w.yaml"))
    details = wizard_details(wizard, "en")
    assert "SECRET" not in str(details) and "hunter2" not in str(details)
    assert details["fields"][0]["choices"] == [{"value": "x", "label": "x"},
                                               {"value": "y", "label": "Y"}]
    assert details["fields"][2]["item"][0]["integerMin"] == 1
    assert details["followUps"] == [{"wizard": "n"}]
    assert set(details) == {"name", "title", "description", "category", "icon", "layer", "path",
                            "availableIn", "fields", "followUps", "steps", "checks"}
