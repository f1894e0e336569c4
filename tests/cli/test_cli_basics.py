from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli


def test_help_and_version() -> None:
    result = run_cli(["--help"])
    assert result.exit_code == 0
    for group in ("config", "recipe", "catalog", "process"):
        assert group in result.stdout
    assert run_cli(["--version"]).stdout.startswith("vance ")


def test_unknown_command_is_usage_error() -> None:
    result = run_cli(["frobnicate"])
    assert result.exit_code == 2
    assert result.stdout == ""


def test_config_set_show_path(vance_home: Path) -> None:
    assert run_cli(["config", "set", "llm.model", "llama3.2"]).exit_code == 0
    assert run_cli(["config", "set", "llm.api_key", "sk-secret-value-1234"]).exit_code == 0
    shown = run_cli(["config", "show", "--json"])
    data = shown.json()
    assert data["llm.model"] == {"value": "llama3.2", "origin": "file"}
    assert data["llm.api_key"]["value"] == "****1234"
    assert "sk-secret" not in shown.stdout and "sk-secret" not in run_cli(
        ["config", "show"]).stdout
    paths = run_cli(["config", "path", "--json"]).json()
    assert paths["config"] == str(vance_home.resolve() / "config.yaml")
    bad = run_cli(["config", "set", "llm.timeout", "--", "-3"])
    assert bad.exit_code == 2 and "llm.timeout" in bad.stderr


def test_global_flags_override_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_TENANT", "from-env")
    data = run_cli(["--tenant", "from-flag", "config", "show", "--json"]).json()
    assert data["tenant"] == {"value": "from-flag", "origin": "flag"}


def test_recipe_list_json_and_show() -> None:
    listing = run_cli(["recipe", "list", "--json"]).json()
    names = [r["name"] for r in listing]
    assert "essay-pipeline" in names and "session-root" not in names
    assert set(listing[0]) == {"name", "engine", "title", "description", "layer", "hidden"}
    every = [r["name"] for r in run_cli(["recipe", "list", "--all", "--json"]).json()]
    assert "session-root" in every
    shown = run_cli(["recipe", "show", "essay-pipeline", "--json"]).json()
    assert shown["engine"] == "vogon" and shown["layer"] == "RESOURCE"
    missing = run_cli(["recipe", "show", "esay-pipeline"])
    assert missing.exit_code == 2 and "did you mean 'essay-pipeline'" in missing.stderr
    bad = run_cli(["recipe", "show", "../etc/passwd"])
    assert bad.exit_code == 2 and "'..'" in bad.stderr


def test_broken_recipe_warns_on_stderr_only(project_dir: Path) -> None:
    (project_dir / "recipes").mkdir(parents=True)
    (project_dir / "recipes" / "bad.yaml").write_text("engine: [\n")
    result = run_cli(["recipe", "list", "--json"])
    assert result.exit_code == 0
    assert "recipe 'bad' left out" in result.stderr
    assert len(result.json()) == 17


def test_process_create_refuses_reserved_underscore_names() -> None:
    for name in ("_session-root", "_x"):
        result = run_cli(["process", "create", "--recipe", "coding", "--name", name])
        assert result.exit_code == 2
        assert f"process name '{name}' is reserved" in result.stderr
        assert "names starting with '_'" in result.stderr
        assert "Traceback" not in result.stderr
    data = run_cli(["process", "create", "--recipe", "coding", "--name", "_x", "--json"]).json()
    assert data["error"] == "reserved_process_name" and data["name"] == "_x"
    assert run_cli(["process", "list", "--json"]).json() == []


def test_process_create_list_show() -> None:
    created = run_cli(["process", "create", "--recipe", "translate", "--name", "fr",
                       "--steer", "Bonjour", "--param", "target=fr", "--param", "n:=2",
                       "--json"])
    assert created.exit_code == 0, created.stderr
    proc = created.json()
    assert proc["params"] == {"target": "fr", "n": 2} and proc["status"] == "IDLE"
    listed = run_cli(["process", "list", "--json"]).json()
    assert [p["id"] for p in listed] == [proc["id"]]
    shown = run_cli(["process", "show", proc["id"][:8], "--json"]).json()
    assert {k: v for k, v in shown.items() if k not in ("turns", "llm", "inputWaiting")} == proc
    assert (shown["turns"], shown["llm"]["calls"]) == (0, 0)  # no LLM: it waits
    assert shown["inputWaiting"] == 1 and listed[0]["inputWaiting"] == 1  # its steer
    human = run_cli(["process", "show", proc["id"]])
    assert proc["id"] in human.stdout and "translate" in human.stdout
    dup = run_cli(["process", "create", "--recipe", "coding", "--name", "fr"])
    assert dup.exit_code == 2 and "already exists" in dup.stderr
    unknown = run_cli(["process", "create", "--recipe", "tranlate", "--name", "x", "--json"])
    assert unknown.exit_code == 2
    assert unknown.json()["error"] == "unknown_recipe"
    assert "did you mean 'translate'" in unknown.stderr


def test_bad_param_is_usage_error() -> None:
    result = run_cli(["process", "create", "--recipe", "coding", "--name", "x", "--param", "oops"])
    assert result.exit_code == 2 and "KEY=VALUE" in result.stderr


def test_catalog_show_json() -> None:
    data = run_cli(["catalog", "show", "--json"]).json()
    assert data["source"] == "bundled"
    assert {e["name"] for e in data["engines"]} == {"arthur", "ford", "marvin", "vogon",
                                                     "zaphod", "slartibartfast"}


def test_two_concurrent_creates_with_one_name() -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "vance_cli", "process", "create",
                               "--recipe", "coding", "--name", "race", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], results
    loser = next(r for r in results if r[0] == 2)
    assert "already exists" in loser[2]
    listed = run_cli(["process", "list", "--json"]).json()
    assert [p["name"] for p in listed] == ["race"]


def test_piped_output_ends_quietly() -> None:
    run_cli(["process", "create", "--recipe", "coding", "--name", "p1"])
    proc = subprocess.run(f"{sys.executable} -m vance_cli recipe list | head -n 1",
                          shell=True, capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("analyze\t")  # piped: tab-separated rows, no header
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr
    many = subprocess.run(f"{sys.executable} -m vance_cli recipe list --json | head -c 10",
                          shell=True, capture_output=True, text=True, timeout=60)
    assert many.stderr == ""


def test_output_larger_than_the_pipe_buffer_ends_quietly_in_head(project_dir: Path) -> None:
    recipes = project_dir / "recipes"
    recipes.mkdir(parents=True)
    for i in range(1500):  # ~300 KB of JSON: far beyond the 64 KB pipe buffer
        (recipes / f"r{i:04d}.yaml").write_text(
            f"engine: ford\ndescription: generated recipe number {i} " + "x" * 100 + "\n")
    for args in ("recipe list --json", "recipe list"):
        # pipefail: the exit code is vance's own; a reader that stops early is no error
        proc = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m vance_cli "
                               f"{args} | head -c 2000"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert len(proc.stdout) == 2000
        assert proc.stderr == "", proc.stderr
        assert "Traceback" not in proc.stderr and "Broken pipe" not in proc.stderr


USAGE_ERRORS = [
    # (args, where --json goes, what the message says, command whose help is pointed to);
    # click words its own messages (they change between click releases): only vance's are exact
    (["delegate", "--nope"], 1, "--nope", "vance delegate"),
    (["delegate"], 1, "Invalid value for --task: missing: give the task", "vance delegate"),
    (["log", "-n", "0"], 1, "Invalid value for '-n' / '--limit'", "vance log"),
    (["process", "show"], 2, "Missing argument 'ID'", "vance process show"),
    (["frobnicate"], 1, "No such command 'frobnicate'", "vance"),
    (["wizard", "render", "gremium", "--set"], 3, "Option '--set' requires an argument",
     "vance wizard render"),
]


@pytest.mark.parametrize(("args", "at", "message", "command"), USAGE_ERRORS)
@pytest.mark.parametrize("as_json", [False, True])
def test_usage_errors_are_one_line_and_json_with_json(args: list[str], at: int, message: str,
                                                      command: str, as_json: bool) -> None:
    result = run_cli([*args[:at], "--json", *args[at:]] if as_json else args)
    assert result.exit_code == 2
    line = result.stderr
    assert line.startswith("vance: error: ") and message in line and line.count("\n") == 1, line
    assert line.endswith(f" — see '{command} --help'\n")
    assert "Usage:" not in line and "Try '" not in line
    if as_json:
        message_line = line.removeprefix("vance: error: ").rstrip("\n")
        assert result.json() == {"error": "usage_error", "message": message_line}
    else:
        assert result.stdout == ""


def test_a_group_without_a_command_still_shows_its_help() -> None:
    result = run_cli(["config"])
    assert result.exit_code == 2
    assert "set" in result.stdout + result.stderr and "vance: error" not in result.stderr


@pytest.mark.parametrize(("args", "code"), [
    # a reader that never reads: the exit code is still the command's own
    ("delegate --require-match --dry-run --json --task 'zzz qqq'", 3),
    ("delegate --require-match --dry-run --task 'zzz qqq'", 3),
    ("recipe show nosuch --json", 2),
    ("delegate --nope --json", 2),
    ("delegate --dry-run --json --task 'Write a short essay about the history of tea'", 0),
])
def test_a_closed_pipe_keeps_the_commands_exit_code(args: str, code: int) -> None:
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m vance_cli "
                           f"{args} | true"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_config_show_masks_credentials_in_the_base_url() -> None:
    env = {"VANCE_LLM_BASE_URL": "https://ann:s3cr3t-pass@llm.example.org/v1"}
    shown = run_cli(["config", "show", "--json"], env=env).json()
    assert shown["llm.base_url"]["value"] == "https://ann:****@llm.example.org/v1"
    human = run_cli(["config", "show"], env=env)
    assert "s3cr3t" not in human.stdout and "ann:****@llm.example.org" in human.stdout
    token = run_cli(["config", "show", "--json"],
                    env={"VANCE_LLM_BASE_URL": "https://tok3n@llm.example.org/v1"}).json()
    assert token["llm.base_url"]["value"] == "https://****@llm.example.org/v1"


def test_openai_api_base_with_a_key_warns_instead_of_calling_openai() -> None:
    env = {"OPENAI_API_BASE": "http://localhost:8000/v1", "OPENAI_API_KEY": "sk-test-1234567890"}
    result = run_cli(["config", "show", "--json"], env=env)
    assert result.exit_code == 0
    assert "OPENAI_API_BASE is set but not read" in result.stderr
    assert "OPENAI_BASE_URL" in result.stderr
    fine = run_cli(["config", "show", "--json"],
                   env={**env, "OPENAI_BASE_URL": "http://localhost:8000/v1"})
    assert "OPENAI_API_BASE" not in fine.stderr
