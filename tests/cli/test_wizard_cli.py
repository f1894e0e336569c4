"""``vance wizard …`` through the real boundary (stdout and stderr checked apart)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_file_tree, run_cli

from vance_cli.wizards.followups import INSTRUCTIONS, parse_link

DATA = Path(__file__).resolve().parents[1] / "data" / "wizards"
PROJECT_WIZARDS = ["essay-mit-recipe", "essay-recipe", "gremium", "vogon-strategie"]
BROKEN_FILES = {
    "wizards/bad-template.yaml": "title: Bad template\nfields: []\n"
                                 "promptTemplate: '{% for x in items %}no end'\n",
    "wizards/bad-type.yaml": "title: Bad type\npromptTemplate: x\n"
                             "fields:\n  - {name: colour, type: colour}\n",
    "wizards/not-yaml.yaml": "title: [unclosed\n  : : :\n",
}


def _names(result_json: list[dict[str, str]]) -> list[str]:
    return sorted(entry["name"] for entry in result_json)


# --- list ---------------------------------------------------------------------------------------

def test_fresh_install_lists_the_four_project_wizards() -> None:
    result = run_cli(["wizard", "list", "--json"])
    assert result.exit_code == 0 and result.stderr == ""
    listing = result.json()
    assert _names(listing) == PROJECT_WIZARDS
    assert set(listing[0]) == {"name", "title", "description", "category", "icon", "layer",
                               "path"}
    assert {e["layer"] for e in listing} == {"RESOURCE"}
    # grouped by category (alphabetical), then by title
    assert [(e["category"], e["title"]) for e in listing] == [
        ("Collaboration", "Define an advisory council"),
        ("Planning", "Plan a vogon strategy"),
        ("Writing", "Create an essay recipe"),
        ("Writing", "Write an essay with a recipe"),
    ]


@pytest.mark.parametrize("project", ["_tenant", "", "_user_anna"])
def test_create_project_is_listed_only_without_a_project(project: str) -> None:
    names = _names(run_cli(["--project", project, "wizard", "list", "--json"]).json())
    assert names == sorted([*PROJECT_WIZARDS, "create-project"])


def test_german_titles_with_vance_lang_de() -> None:
    listing = run_cli(["wizard", "list", "--json"], env={"VANCE_LANG": "de"}).json()
    titles = {e["name"]: e["title"] for e in listing}
    assert titles["gremium"] == "Gremium definieren"
    assert titles["essay-recipe"] == "Essay-Rezept erstellen"
    assert [e["category"] for e in listing] == ["Planung", "Schreiben", "Schreiben",
                                                "Zusammenarbeit"]


def test_locale_gives_the_language_and_category_filter() -> None:
    listing = run_cli(["wizard", "list", "--category", "schreiben", "--json"],
                      env={"LANG": "de_DE.UTF-8"}).json()
    assert [e["title"] for e in listing] == ["Essay mit Rezept schreiben",
                                             "Essay-Rezept erstellen"]


def test_human_listing_shows_title_layer_and_category() -> None:
    result = run_cli(["wizard", "list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for text in ("Collaboration", "Define an advisory council", "gremium", "RESOURCE"):
        assert text in result.stdout


def test_broken_wizards_beside_the_bundled_ones(project_dir: Path) -> None:
    build_file_tree(project_dir, BROKEN_FILES)
    listed = run_cli(["wizard", "list", "--json"])
    assert listed.exit_code == 0
    assert _names(listed.json()) == PROJECT_WIZARDS
    warnings = [line for line in listed.stderr.splitlines() if line]
    assert len(warnings) == 3 and all(w.startswith("vance: warning: wizard '") for w in warnings)

    lint = run_cli(["wizard", "lint", "--json"])
    assert lint.exit_code == 1
    report = lint.json()
    assert report["ok"] is False and set(report) == {"ok", "wizards"}
    assert set(report["wizards"][0]) == {"name", "layer", "path", "ok", "reason"}
    reasons = {o["name"]: o["reason"] for o in report["wizards"] if not o["ok"]}
    assert set(reasons) == {"bad-template", "bad-type", "not-yaml"}
    assert "promptTemplate line 1" in reasons["bad-template"]
    assert "unknown_field_type 'colour'" in reasons["bad-type"]
    assert "YAML error" in reasons["not-yaml"]
    assert sum(o["ok"] for o in report["wizards"]) == 5

    human = run_cli(["wizard", "lint"], env={"COLUMNS": "250"})
    assert human.exit_code == 1 and human.stdout.count("\tBROKEN: ") == 3
    assert human.stderr == ""  # piped: no caption (a diagnostic, terminal only)


def test_lint_paths_and_exit_codes(tmp_path: Path) -> None:
    build_file_tree(tmp_path, {"ok.yaml": "title: T\nfields: []\npromptTemplate: x\n"})
    assert run_cli(["wizard", "lint", str(tmp_path / "ok.yaml")]).exit_code == 0
    missing = run_cli(["wizard", "lint", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    assert run_cli(["wizard", "lint"]).exit_code == 0


# --- show ---------------------------------------------------------------------------------------

def test_show_lists_fields_never_templates() -> None:
    result = run_cli(["wizard", "show", "essay-recipe", "--json"])
    assert result.exit_code == 0
    data = result.json()
    assert [f["name"] for f in data["fields"]] == ["recipeName", "style", "format", "length",
                                                   "reviewLoop"]
    assert data["fields"][3] == {"name": "length", "type": "integer", "label": "Length in words",
                                 "help": "", "required": True, "defaultValue": 1200,
                                 "integerMin": 300, "integerMax": 5000,
                                 "showIf": 'format == "long"'}
    assert data["steps"] == [] and data["checks"] is False
    assert "promptTemplate" not in result.stdout and "{{" not in result.stdout
    human = run_cli(["--lang", "de", "wizard", "show", "gremium"], env={"COLUMNS": "200"})
    assert "members[].persona" in human.stdout and "Mitglieder" in human.stdout
    assert "{{" not in human.stdout


def test_essay_recipe_asks_its_length_only_for_the_long_format() -> None:
    short = run_cli(["wizard", "render", "essay-recipe", "--set", "recipeName=x",
                     "--set", "format=short", "--set", "length=9"])  # hidden: not validated
    assert short.exit_code == 0, short.stderr
    assert "Length: short, at most 600 words." in short.stdout
    long = run_cli(["wizard", "render", "essay-recipe", "--set", "recipeName=x",
                    "--set", "format=long", "--set", "length=9"])
    assert long.exit_code == 2 and "length: below_min" in long.stderr


def test_show_ignores_available_in_and_unknown_names_suggest() -> None:
    assert run_cli(["wizard", "show", "create-project", "--json"]).exit_code == 0
    unknown = run_cli(["wizard", "show", "gremum", "--json"])
    assert unknown.exit_code == 2 and unknown.json()["error"] == "unknown_wizard"
    assert "did you mean 'gremium'" in unknown.stderr


# --- render -------------------------------------------------------------------------------------

def test_render_gremium_lists_every_member() -> None:
    result = run_cli(["wizard", "render", "gremium", "--values", str(DATA / "gremium.yaml"),
                      "--json"])
    assert result.exit_code == 0, result.stderr
    assert set(result.json()) == {"prompt"}
    prompt = result.json()["prompt"]
    for member in ("- Ada: ", "- Grace: ", "- Linus: "):
        assert member in prompt


def test_render_with_a_member_name_missing_exits_2_with_a_0_based_path(tmp_path: Path) -> None:
    values = (DATA / "gremium.yaml").read_text().replace("  - name: Grace\n", "  - name: ''\n")
    answers = tmp_path / "answers.yaml"
    answers.write_text(values)
    result = run_cli(["wizard", "render", "gremium", "--values", str(answers), "--json"])
    assert result.exit_code == 2
    assert result.json() == {"errors": [{"field": "members[1].name", "error": "required"}]}
    assert "members[1].name: required" in result.stderr


def test_render_from_stdin_with_set_overrides_and_typed_coercion() -> None:
    values = json.dumps({"recipeName": "x", "style": "academic"})
    result = run_cli(["wizard", "render", "essay-recipe", "--values", "-", "--set", "length=450",
                      "--set", "reviewLoop=NO", "--json"], input=values)
    assert result.exit_code == 0, result.stderr
    prompt = result.json()["prompt"]
    assert "about 450 words" in prompt and "3. Final: polish" in prompt


@pytest.mark.parametrize(("setting", "error"), [
    ("length=1e3", "expected_integer"), ("length=twelve", "expected_integer"),
    ("length=12.5", "expected_integer"), ("length=100", "below_min"),
    ("length=99999", "above_max"), ("reviewLoop=maybe", "expected_boolean"),
    ("style=casual", "invalid_choice"),
])
def test_flags_are_validated_like_typed_answers(setting: str, error: str) -> None:
    result = run_cli(["wizard", "render", "essay-recipe", "--set", "recipeName=x",
                      "--set", setting, "--json"])
    assert result.exit_code == 2
    (only,) = result.json()["errors"]
    assert only == {"field": setting.split("=", 1)[0], "error": error}


def test_render_crlf_answers_equal_lf_answers(tmp_path: Path) -> None:
    lf = (DATA / "gremium.yaml").read_bytes()
    crlf = tmp_path / "crlf.yaml"
    crlf.write_bytes(lf.replace(b"\n", b"\r\n"))
    outputs = [run_cli(["wizard", "render", "gremium", "--values", str(path), "--json"]).json()
               for path in (DATA / "gremium.yaml", crlf)]
    assert outputs[0] == outputs[1] and "\r" not in outputs[1]["prompt"]


def test_unknown_set_keys_warn_and_bad_values_files_fail(tmp_path: Path) -> None:
    result = run_cli(["wizard", "render", "essay-mit-recipe", "--set", "recipe=r",
                      "--set", "topic=t", "--set", "tpoic=x"])
    assert result.exit_code == 0
    assert "'tpoic' is not a field of wizard 'essay-mit-recipe'" in result.stderr
    assert result.stdout.startswith('Write an essay with the essay recipe "r"')
    bad = tmp_path / "bad.json"
    bad.write_text('{"recipe": ')
    failed = run_cli(["wizard", "render", "essay-mit-recipe", "--values", str(bad)])
    assert failed.exit_code == 2 and "bad.json" in failed.stderr
    missing = run_cli(["wizard", "render", "essay-mit-recipe", "--values", str(tmp_path / "no")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.stderr


def test_essay_recipe_ends_with_the_follow_up_link() -> None:
    result = run_cli(["wizard", "render", "essay-recipe", "--set", "recipeName=my essay/ß&co",
                      "--json"])
    last = result.json()["prompt"].splitlines()[-1]
    assert last.startswith("- [Write an essay with the recipe “my essay/ß&co”](vance:/wizards/")
    uri = last[last.index("](") + 2:-1]
    assert uri == ("vance:/wizards/essay-mit-recipe?kind=wizard"
                   "&recipe=my+essay%2F%C3%9F%26co")
    assert parse_link(uri).values == (("recipe", "my essay/ß&co"),)


# --- run / open without a terminal ---------------------------------------------------------------

def test_follow_up_link_round_trips_through_open() -> None:
    prompt = run_cli(["wizard", "render", "essay-recipe", "--set", "recipeName=my essay & co",
                      "--json"]).json()["prompt"]
    uri = prompt.splitlines()[-1].split("](")[1][:-1]
    opened = run_cli(["wizard", "open", uri, "--no-input", "--print", "--json"])
    assert opened.exit_code == 2  # topic is still missing: named, nothing printed
    assert opened.json() == {"errors": [{"field": "topic", "error": "required"}]}
    assert "missing values for topic" in opened.stderr
    full = run_cli(["wizard", "open", uri + "&topic=Trees+in+cities&unknown=1&kind2=x",
                    "--no-input", "--print", "--json"])
    assert full.exit_code == 0, full.stderr
    text = full.json()["prompt"]
    assert 'essay recipe "my essay & co"' in text and "Topic: Trees in cities" in text


def test_open_completes_a_link_with_values_and_set_in_that_order(tmp_path: Path) -> None:
    uri = "vance:/wizards/essay-mit-recipe?kind=wizard&recipe=from-link&topic=link+topic"
    missing = run_cli(["wizard", "open", "vance:/wizards/essay-mit-recipe?kind=wizard&recipe=x",
                       "--print", "--no-input"])
    assert missing.exit_code == 2
    assert "(--no-input; give them with --set KEY=VALUE or --values FILE)" in missing.stderr
    answers = tmp_path / "answers.yaml"
    answers.write_text("topic: file topic\nrecipe: from-file\ncolour: red\n", encoding="utf-8")
    # the link first, then --values, then --set: later wins
    from_file = run_cli(["wizard", "open", uri, "--values", str(answers), "--print",
                         "--no-input", "--json"])
    assert from_file.exit_code == 0, from_file.stderr
    text = from_file.json()["prompt"]
    assert '"from-file"' in text and "Topic: file topic" in text
    assert "'colour' is not a field of wizard 'essay-mit-recipe'" in from_file.stderr
    overridden = run_cli(["wizard", "open", uri, "--values", str(answers), "-s", "topic=set",
                          "--print", "--no-input", "--json"])
    assert "Topic: set" in overridden.json()["prompt"]
    assert '"from-file"' in overridden.json()["prompt"]
    only_link = run_cli(["wizard", "open", uri, "--print", "--no-input", "--json"])
    assert '"from-link"' in only_link.json()["prompt"]
    piped = run_cli(["wizard", "open", "vance:/wizards/essay-mit-recipe?kind=wizard&recipe=x",
                     "--values", "-", "--print"], input="topic: from stdin\n")
    assert piped.exit_code == 0, piped.stderr
    assert "Topic: from stdin" in piped.stdout


def test_open_skips_repeat_fields_and_rejects_bad_links() -> None:
    uri = "vance:/wizards/gremium?kind=wizard&councilName=c&purpose=p&members=x"
    result = run_cli(["wizard", "open", uri, "--no-input", "--print", "--json"])
    assert result.json() == {"errors": [{"field": "members", "error": "required"}]}
    for bad, message in (("vance:/wizards/gremium?kind=recipe", "kind=recipe"),
                         ("vance:/wizards/../x?kind=wizard", "bad wizard name"),
                         ("vance:/wizards/nope?kind=wizard", "unknown wizard 'nope'")):
        rejected = run_cli(["wizard", "open", bad])
        assert rejected.exit_code == 2 and message in rejected.stderr
        assert rejected.stdout == ""


def test_run_without_a_terminal_names_missing_fields_and_never_reads_stdin() -> None:
    result = run_cli(["wizard", "run", "gremium", "--print"],
                     input="product-board\nsome purpose\n")
    assert result.exit_code == 2 and result.stdout == ""
    assert "missing values for councilName, purpose, members" in result.stderr
    assert "stdin is not a terminal" in result.stderr


def test_run_no_input_with_values_prints_only_the_prompt() -> None:
    result = run_cli(["wizard", "run", "gremium", "--values", str(DATA / "gremium.yaml"),
                      "--no-input", "--print"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(
        'Create a reusable recipe for an advisory council named "product-board"')
    assert result.stderr == ""
    as_json = run_cli(["wizard", "run", "gremium", "--values", "-", "--print", "--json"],
                      input=(DATA / "gremium.yaml").read_text())
    assert as_json.exit_code == 0 and as_json.json()["prompt"] == result.stdout.rstrip("\n")


def test_help_for_every_wizard_command() -> None:
    for command in ("list", "show", "run", "render", "open", "lint"):
        result = run_cli(["wizard", command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.stdout


def test_wizard_list_json_imports_no_prompt_library() -> None:
    code = ("import sys\nfrom vance_cli.cli.boundary import run\nrun(['wizard','list','--json'])\n"
            "sys.stderr.write('MODULES=' + ','.join(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    loaded = {m.split(".")[0] for m in proc.stderr.rsplit("MODULES=", 1)[1].split(",")}
    assert loaded & {"questionary", "prompt_toolkit", "openai", "rich"} == set()


# --- submit: the delegate path -------------------------------------------------------------------

DELEGATE_KEYS = {"decision", "recipe", "engine", "rationale", "reason", "process", "fallback"}


def test_run_without_print_delegates_with_the_output_of_vance_delegate() -> None:
    values = str(DATA / "essay-mit-recipe.yaml")
    prompt = run_cli(["wizard", "render", "essay-mit-recipe", "--values", values,
                      "--json"]).json()["prompt"]
    ran = run_cli(["wizard", "run", "essay-mit-recipe", "--values", values, "--no-input",
                   "--dry-run", "--json"])
    assert ran.exit_code == 0, ran.stderr
    delegated = run_cli(["delegate", "--task", "-", "--dry-run", "--json"], input=prompt)
    assert set(ran.json()) == DELEGATE_KEYS
    assert ran.json() == delegated.json()
    human = run_cli(["wizard", "run", "essay-mit-recipe", "--values", values, "--no-input",
                     "--dry-run"], env={"COLUMNS": "200"})
    same = run_cli(["delegate", "--task", "-", "--dry-run"], input=prompt,
                   env={"COLUMNS": "200"})
    assert human.stdout == same.stdout and "decision:" in human.stdout


def test_run_starts_a_process_whose_goal_is_the_prompt() -> None:
    ran = run_cli(["wizard", "open",
                   "vance:/wizards/essay-mit-recipe?kind=wizard&recipe=plain&topic=Tea",
                   "--no-input", "--json"])
    assert ran.exit_code == 0, ran.stderr
    result = ran.json()
    logged = run_cli(["log", "--json", "-n", "1"]).json()[0]
    assert logged["task"].startswith('Write an essay with the essay recipe "plain"')
    # "write an essay" is essay-pipeline's trigger keyword: a MATCH with no LLM call
    assert (result["decision"], result["recipe"]) == ("MATCH", "essay-pipeline")
    assert logged["decision"] == "MATCH" and logged["processId"] == result["process"]["id"]
    assert result["process"]["goal"] == logged["task"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_follow_up_links_do_not_change_the_routing(lang: str) -> None:
    args = ["--lang", lang, "wizard", "run", "essay-recipe", "--set", "recipeName=plain",
            "--no-input", "--json"]
    prompt = run_cli(["--lang", lang, "wizard", "render", "essay-recipe", "--set",
                      "recipeName=plain", "--json"]).json()["prompt"]
    body = prompt[:prompt.index("\n\n" + INSTRUCTIONS[lang])]
    alone = run_cli(["delegate", "--task", body, "--dry-run", "--json"]).json()
    data = run_cli(args).json()
    assert data["recipe"] == alone["recipe"]  # decided on the prompt without its links
    assert data["process"]["goal"] == prompt  # the process gets the whole text
    logged = run_cli(["log", "--json"]).json()[0]
    assert logged["task"] == body
