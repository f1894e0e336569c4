"""What the commands print for people: values, complete piped rows, columns, counts."""

from __future__ import annotations

from helpers import run_cli


def _pairs(stdout: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line)


def test_recipe_show_renders_values_for_people() -> None:
    shown = _pairs(run_cli(["recipe", "show", "session-root"]).stdout)
    assert shown["internal"] == "true"
    assert _pairs(run_cli(["recipe", "show", "translate"]).stdout)["internal"] == "false"


def test_recipe_show_renders_params_with_the_engine_defaults(project_dir: object) -> None:
    from pathlib import Path

    folder = Path(str(project_dir)) / "recipes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "switch.yaml").write_text(
        "engine: ford\ndescription: Switch devices.\nparams:\n  confirm: true\n  rooms: [a, b]\n",
        encoding="utf-8")
    out = run_cli(["recipe", "show", "switch"]).stdout
    block = out[out.index("params:"):out.index("tags:")].splitlines()
    assert block == ["params: ", "  passive: false", "  maxIterations: 5", "  temperature: 0.7",
                     "  maxTokens: 4096",
                     "  confirm: true", "  rooms:", "  - a", "  - b"]


def test_config_show_renders_booleans_for_people() -> None:
    rows = [line.split("\t") for line in run_cli(["config", "show"]).stdout.splitlines()]
    values = {row[0]: row[1] for row in rows}
    assert values["log.tasks"] == "true"
    assert "True" not in {row[1] for row in rows} and "None" not in {row[1] for row in rows}


def test_wizard_show_renders_defaults_for_people() -> None:
    rows = [line.split("\t") for line in run_cli(["wizard", "show", "gremium"]).stdout.splitlines()
            if "\t" in line]
    create_now = next(row for row in rows if row[0] == "createNow")
    assert create_now[1] == "boolean" and create_now[4] == "false"
    assert "False" not in run_cli(["wizard", "show", "gremium"]).stdout


def test_piped_wizard_list_has_complete_rows() -> None:
    result = run_cli(["wizard", "list"])
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) >= 4 and all(len(row) == 5 for row in rows)
    assert all(row[0] for row in rows), rows  # cut -f1 gives every wizard's category
    categories = [row[0] for row in rows]
    assert len(set(categories)) < len(categories)  # some category holds two wizards


def test_process_list_all_sessions_has_a_session_column() -> None:
    assert run_cli(["process", "create", "-r", "translate", "-n", "a"]).exit_code == 0
    assert run_cli(["--session", "other", "process", "create", "-r", "translate", "-n", "b"]
                   ).exit_code == 0
    own = [line.split("\t") for line in run_cli(["process", "list"]).stdout.splitlines()]
    assert [row[1] for row in own] == ["a"]
    every = [line.split("\t") for line in
             run_cli(["process", "list", "--all-sessions"]).stdout.splitlines()]
    assert sorted((row[1], row[2]) for row in every) == [("default", "a"), ("other", "b")]


def test_piped_tables_print_no_caption_without_a_terminal() -> None:
    for args in (["recipe", "list"], ["process", "list"], ["log"], ["wizard", "lint"],
                 ["catalog", "show"]):
        result = run_cli(args)
        assert result.exit_code == 0 and result.stderr == "", (args, result.stderr)
