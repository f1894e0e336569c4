"""``vance delegate --task-template … --items …`` end to end, through the real openai client."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from helpers import build_file_tree, run_cli, slart_recipe_reply
from llm_server import ScriptedLLMServer

RESULT_KEYS = ["decision", "recipe", "engine", "rationale", "reason", "process", "fallback"]
TEMPLATE = "Render the text {{ item }} in French for our newsletter"
SHAPE = "Render the text … in French for our newsletter"
MATCH_TRANSLATE = ('Sure.\n```json\n{"decision": "MATCH", "recipe": "translate", '
                   '"rationale": "A translation."}\n```')
NONE_REPLY = '{"decision": "NONE", "recipe": null, "rationale": "Too vague to classify."}'


def _lines(stdout: str) -> list[dict]:
    """Every stdout line must be one JSON object (nothing else is allowed there)."""
    assert stdout.endswith("\n") or stdout == ""
    return [json.loads(line) for line in stdout.splitlines()]


def _process_rows(home: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(home / "state" / "vance.db")
    try:
        return conn.execute("SELECT name, recipe, goal FROM processes ORDER BY rowid").fetchall()
    finally:
        conn.close()


def _batch(items: str, *args: str, env: dict[str, str] | None = None,
           template: str = TEMPLATE):
    return run_cli(["delegate", "--task-template", template, "--items", "-", *args],
                   input=items, env=env)


def test_100_items_make_one_selector_request_and_100_processes(
        llm_server: ScriptedLLMServer, vance_home: Path) -> None:
    llm_server.reply(MATCH_TRANSLATE)
    items = "".join(f"greeting number {i}\n" for i in range(1, 101))
    result = _batch(items, env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert len(llm_server.chat_requests) == 1  # the server's log: exactly one selector request
    user = llm_server.chat_requests[0].json["messages"][-1]["content"]
    assert SHAPE in user and "greeting number" not in user
    lines = _lines(result.stdout)
    assert len(lines) == 100 and all(list(line) == RESULT_KEYS for line in lines)
    assert {(line["decision"], line["recipe"], line["engine"]) for line in lines} == \
        {("MATCH", "translate", "ford")}
    assert all(line["rationale"].startswith("decided once for the task template: A translation")
               for line in lines)
    goals = [line["process"]["goal"] for line in lines]
    assert goals == [f"Render the text greeting number {i} in French for our newsletter"
                     for i in range(1, 101)]
    rows = _process_rows(vance_home)
    assert len(rows) == 100 and len({name for name, _r, _g in rows}) == 100
    assert {recipe for _n, recipe, _g in rows} == {"translate"}
    suffix = lines[0]["process"]["name"].rsplit("-", 1)[1]
    assert lines[6]["process"]["name"] == f"greeting-number-7-7-{suffix}"
    assert "batch: 100 items; 1 selector call (template: MATCH 'translate'); " \
           "100 matched, 0 none, 0 failed" in result.stderr
    log = run_cli(["log", "-n", "5", "--json"]).json()
    assert [(e["task"], e["recipe"], e["processId"]) for e in log] == \
        [(SHAPE, "translate", None)]


def test_none_on_the_template_asks_once_per_item(llm_server: ScriptedLLMServer,
                                                 vance_home: Path) -> None:
    llm_server.reply(NONE_REPLY)
    llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "fr"}')
    llm_server.reply('<think>hmm</think>{"decision": "NONE", "recipe": null, '
                     '"rationale": "No."}')
    llm_server.reply('{"decision": "MATCH", "recipe": "coding", "rationale": "code"}')
    result = _batch("alpha\nbeta\ngamma\n", "--no-fallback", env=llm_server.env(),
                    template="Deal with {{ item }}")
    assert result.exit_code == 0, result.stderr
    assert len(llm_server.chat_requests) == 4  # the template, then one per item
    tasks = [r.json["messages"][-1]["content"] for r in llm_server.chat_requests]
    assert "Deal with …" in tasks[0]
    for task, word in zip(tasks[1:], ("alpha", "beta", "gamma"), strict=True):
        assert f"Deal with {word}" in task
    lines = _lines(result.stdout)
    assert [(x["decision"], x["recipe"], x["reason"]) for x in lines] == [
        ("MATCH", "translate", None), ("NONE", None, "llm_none"), ("MATCH", "coding", None)]
    assert lines[0]["rationale"] == "fr"  # decided for the item itself
    assert [name for name, _r, _g in _process_rows(vance_home)] == \
        [lines[0]["process"]["name"], lines[2]["process"]["name"]]
    assert "batch: 3 items; 4 selector calls (template: NONE (llm_none), then one per item); " \
           "2 matched, 1 none, 0 failed" in result.stderr
    assert len(run_cli(["log", "--json"]).json()) == 4


def test_template_with_only_the_item_is_decided_per_item(llm_server: ScriptedLLMServer) -> None:
    for _ in range(2):
        llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "fr"}')
    result = _batch("Render hello in French\nRender bye in French\n", "--dry-run",
                    env=llm_server.env(), template="{{ item }}.")
    assert result.exit_code == 0, result.stderr
    assert len(llm_server.chat_requests) == 2  # the shape "…." says nothing: not asked
    assert "2 selector calls (template not asked" in result.stderr


def test_jsonl_items_with_keys(vance_home: Path) -> None:
    items = ('{"text": "Good morning", "lang": "French", "who": "Ann"}\n'
             '{"text": "Good night", "lang": "German", "who": "Bo", "urgent": true}\n')
    template = ("Translate \"{{ text }}\" into {{ lang }}"
                "{% if urgent %} urgently{% endif %} (item {{ index }}: {{ item.who }})")
    result = _batch(items, "--title", "{{ lang }} for {{ who }}", "--steer",
                    "Keep the tone of {{ item['who'] }}", "--param", "tone=warm",
                    template=template)
    assert result.exit_code == 0, result.stderr
    lines = _lines(result.stdout)
    assert [x["process"]["goal"] for x in lines] == [
        'Translate "Good morning" into French (item 1: Ann)',
        'Translate "Good night" into German urgently (item 2: Bo)']
    assert [x["process"]["title"] for x in lines] == ["French for Ann", "German for Bo"]
    assert [x["process"]["steerContent"] for x in lines] == ["Keep the tone of Ann",
                                                             "Keep the tone of Bo"]
    assert all(x["process"]["params"]["tone"] == "warm" for x in lines)
    assert all(x["recipe"] == "translate" for x in lines)  # offline, decided on the shape
    log = run_cli(["log", "--json"]).json()
    assert [e["task"] for e in log] == ['Translate "…" into … (item …: …)']


def test_crlf_items_and_blank_lines(vance_home: Path) -> None:
    result = _batch("\r\nFrench cooking\r\n   \r\nthe history of tea\r\n",
                    template="Write a short essay about {{ item }}")
    assert result.exit_code == 0, result.stderr
    goals = [x["process"]["goal"] for x in _lines(result.stdout)]
    assert goals == ["Write a short essay about French cooking",
                     "Write a short essay about the history of tea"]
    assert all("\r" not in g for g in goals)


def test_items_from_a_file_with_bom(tmp_path: Path) -> None:
    path = tmp_path / "items.txt"
    path.write_bytes("\ufeffFrench cooking\nGerman beer".encode())
    result = run_cli(["delegate", "--task-template", "Write a short essay about {{ item }}",
                      "--items", str(path), "--dry-run"])
    assert result.exit_code == 0, result.stderr
    lines = _lines(result.stdout)
    assert [(x["recipe"], x["process"]) for x in lines] == [("essay-pipeline", None)] * 2


def test_a_bad_item_does_not_stop_the_batch(vance_home: Path) -> None:
    run_cli(["process", "create", "--recipe", "translate", "--name", "fr-3"])
    items = ('{"text": "one"}\n'
             '{"txt": "missing key"}\n'
             '{"text": "three"}\n'
             'not json at all\n'
             '["a", "list"]\n'
             '{"text": "six"}\n')
    result = _batch(items, "--name", "fr", template="Translate {{ text }} into French")
    assert result.exit_code == 1  # some items failed
    lines = _lines(result.stdout)
    assert len(lines) == 6
    ok = [x for x in lines if "error" not in x]
    assert [x["process"]["name"] for x in ok] == ["fr-1", "fr-6"]
    bad = [x for x in lines if "error" in x]
    assert [x["error"]["item"] for x in bad] == [2, 3, 4, 5]
    assert [x["error"]["code"] for x in bad] == ["task_template_error", "duplicate_process_name",
                                                 "invalid_input", "invalid_input"]
    for x in bad:
        assert list(x) == [*RESULT_KEYS, "error"]
        assert (x["decision"], x["reason"], x["process"]) == ("NONE", "item_error", None)
        assert x["rationale"] == x["error"]["message"]
    assert "'text' is undefined" in bad[0]["rationale"]
    assert "invalid JSON" in bad[2]["rationale"] and "expected a JSON object" in \
        bad[3]["rationale"]
    assert "2 matched, 0 none, 4 failed" in result.stderr
    assert len(_process_rows(vance_home)) == 3


def test_stdout_is_pure_json_lines_even_with_warnings(project_dir: Path) -> None:
    build_file_tree(project_dir, {"recipes/broken.yaml": "engine: [\n"})
    result = _batch("hello\nbye\n", template="Translate {{ item }} into French")
    assert result.exit_code == 0
    assert [list(x) for x in _lines(result.stdout)] == [RESULT_KEYS, RESULT_KEYS]
    assert "recipe 'broken' left out" in result.stderr
    assert result.stderr.count("left out") == 1  # once per batch, not per item
    assert "\x1b[" not in result.stderr  # no progress bar without a terminal


def test_offline_batch_with_no_llm(vance_home: Path) -> None:
    result = _batch("the kitchen\nthe bedroom\n", "--require-match",
                    template="Turn off the lights in {{ item }}")
    assert result.exit_code == 3  # every item ended NONE
    lines = _lines(result.stdout)
    assert [(x["decision"], x["reason"]) for x in lines] == [("NONE", "offline_no_match")] * 2
    assert all(x["rationale"].startswith("offline selector (no LLM configured)") for x in lines)
    assert "3 selector calls" in result.stderr
    matched = _batch("tea\ncoffee\n", "--require-match",
                     template="Write a short essay about {{ item }}")
    assert matched.exit_code == 0 and len(_process_rows(vance_home)) == 2


def test_dry_run_starts_nothing_and_caller_is_the_parent(vance_home: Path) -> None:
    dry = _batch("a\nb\n", "--dry-run", template="Write a short essay about {{ item }}")
    assert [x["process"] for x in _lines(dry.stdout)] == [None, None]
    assert _process_rows(vance_home) == []
    parent = run_cli(["process", "create", "--recipe", "marvin", "--name", "boss",
                      "--json"]).json()["id"]
    result = _batch("a\nb\n", "--caller", parent[:6],
                    template="Write a short essay about {{ item }}")
    assert {x["process"]["parentProcessId"] for x in _lines(result.stdout)} == {parent}


def test_an_item_that_renders_empty_is_an_empty_task() -> None:
    result = _batch('{"topic": "tea"}\n{"topic": ""}\n',
                    template="{% if topic %}Write a short essay about {{ topic }}{% endif %}")
    lines = _lines(result.stdout)
    assert [(x["decision"], x["reason"]) for x in lines] == [("MATCH", None),
                                                            ("NONE", "empty_task")]


def test_an_item_of_zero_width_characters_is_an_empty_task(
        llm_server: ScriptedLLMServer) -> None:
    result = _batch('{"topic": "\\u200b\\u200d\\ufeff"}\n{"topic": " \\u2060 "}\n',
                    template="{{ topic }}", env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    assert [(x["decision"], x["reason"]) for x in _lines(result.stdout)] == \
        [("NONE", "empty_task")] * 2
    assert llm_server.chat_requests == []


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "x", "--task-template", "y", "--items", "-"],
     "Invalid value for --task: not used in batch mode: --task-template T gives the task"),
    (["--task", "x", "--items", "-"], "Invalid value for --items: needs --task-template T (the"
                                      " task for each item); --task is not used in batch mode"),
    (["--task-template", "y"], "needs --items"),
    (["--items", "-"], "needs --task-template"),
    ([], "missing: give the task"),
    (["--task-template", "{% for", "--items", "-"],
     "task template (--task-template) does not compile"),
    (["--task-template", 'x {{ item }} {% include "/etc/passwd" %}', "--items", "-"],
     "task template (--task-template) uses {% include %} (line 1)"),
    (["--task-template", "x {{ item }}", "--steer", "{% import 'm' as m %}", "--items", "-"],
     "steer template (--steer) uses {% import %}"),
    (["--task-template", "x {{ item }}", "--title", "{% if %}", "--items", "-"],
     "title template (--title) does not compile"),
    (["--task-template", "x {{ item }}", "--items", "nope.txt"],
     "items file nope.txt: no such file or folder"),
    (["--task-template", "x {{ item }}", "--items", "-", "--name", "bad\tname"],
     "process name has a control character"),
    (["--task-template", "x {{ item }}", "--items", "-", "--name", "_job"],
     "names starting with '_' are for vance's own processes"),
])
def test_bad_batch_usage_exits_2_before_any_selector_call(
        args: list[str], message: str, llm_server: ScriptedLLMServer) -> None:
    result = run_cli(["delegate", *args], input="a\n", env=llm_server.env())
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == "" and llm_server.chat_requests == []


def test_summary_says_what_happened(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    nothing = run_cli(["delegate", "--task-template", "Translate {{ item }} into French",
                       "--items", str(empty)])
    assert nothing.exit_code == 0 and nothing.stdout == ""
    assert nothing.stderr == ("batch: 0 items; 0 selector calls (no items: nothing to decide);"
                              " 0 matched, 0 none, 0 failed\n")
    arithmetic = run_cli(["delegate", "--task-template", "{{ item * 2 }} things", "--items", "-",
                          "--dry-run"], input="a\n")
    assert "(template not asked: it renders only with a real item; one per item)" in \
        arithmetic.stderr


def test_an_undefined_steer_variable_names_the_option_and_the_variable() -> None:
    result = run_cli(["delegate", "--task-template", "Translate {{ item }} into French",
                      "--steer", "Hi {{ nope }}", "--items", "-", "--dry-run"], input="a\n")
    (line,) = _lines(result.stdout)
    assert line["error"]["message"] == ("item 1 (line 1): steer template (--steer): 'nope' is"
                                        " undefined (this item has: index, item)")


def test_items_format_forces_plain_lines() -> None:
    result = _batch('{"not": "json object to me"}\n', "--items-format", "lines", "--dry-run",
                    template="Write a short essay about {{ item }}")
    assert _lines(result.stdout)[0]["decision"] == "MATCH"
    log = run_cli(["log", "--json"]).json()
    assert log[0]["task"] == "Write a short essay about …"


def test_no_items_is_an_empty_batch(llm_server: ScriptedLLMServer) -> None:
    result = _batch("\n\n", env=llm_server.env())
    assert (result.exit_code, result.stdout) == (0, "")
    assert llm_server.chat_requests == []
    assert "batch: 0 items; 0 selector calls" in result.stderr


def test_prompt_stays_within_the_cap_with_5000_recipes(
        llm_server: ScriptedLLMServer, project_dir: Path, tenant_dir: Path) -> None:
    relevant = set()
    for i in range(5000):
        layer = project_dir if i % 2 else tenant_dir
        name = f"group{i % 50}/recipe-{i:04d}"
        topic = "bookkeeping"
        if i % 250 == 7:
            topic = "newsletter"
            relevant.add(name)
        path = layer / "recipes" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"engine: ford\ndescription: Handles case {i} of {topic} work.\n")
    llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "fr"}')
    result = _batch("hello\nbye\n", env=llm_server.env(), template=TEMPLATE)
    assert result.exit_code == 0, result.stderr
    assert len(llm_server.chat_requests) == 1
    system, _user = (m["content"] for m in llm_server.chat_requests[0].json["messages"])
    entries = re.findall(r"^- `([^`]+)` \(engine ", system, flags=re.MULTILINE)
    assert len(entries) == 50
    total = int(re.search(r"\(The 50 of (\d+) recipes most relevant", system).group(1))
    assert total > 5000
    assert len(relevant) == 20 and relevant <= set(entries)  # by relevance, not a cut
    assert "translate" in entries
    schema = llm_server.chat_requests[0].json["response_format"]["json_schema"]["schema"]
    matched = schema["properties"]["answer"]["anyOf"][0]
    assert len(matched["properties"]["recipe"]["enum"]) == 50


def test_an_item_that_fits_nothing_gets_the_fallback_per_item(
        llm_server: ScriptedLLMServer, project_dir: Path) -> None:
    llm_server.reply(NONE_REPLY)  # the template's shape: nothing fits
    llm_server.reply('{"decision": "MATCH", "recipe": "translate", "rationale": "fr"}')
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "No device recipe."}')
    llm_server.reply(slart_recipe_reply())  # Slartibartfast, for the second item only
    result = _batch("alpha\nthe kitchen lights\n", "--name", "job", env=llm_server.env(),
                    template="Deal with {{ item }}")
    assert result.exit_code == 0, result.stderr
    assert len(llm_server.chat_requests) == 4
    first, second = _lines(result.stdout)
    assert (first["decision"], first["recipe"], first["fallback"]) == ("MATCH", "translate", None)
    assert (second["decision"], second["reason"]) == ("NONE", "llm_none")
    assert second["fallback"]["outcome"] == "GENERATED"
    assert second["process"]["recipe"] == second["fallback"]["recipeName"]
    assert second["process"]["name"] == "job-2"
    assert (project_dir / second["fallback"]["recipePath"]).is_file()


@pytest.mark.timeout(10)
def test_a_hostile_task_template_is_each_items_error() -> None:
    result = run_cli(["delegate", "--task-template", "{{ 'a' * 10**9 }}", "--items", "-"],
                     input="one\n")
    assert result.exit_code == 1
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["error"]["code"] == "task_template_error"
    assert "repetition would exceed the limit of 1,000,000 characters" in line["rationale"]


def test_an_llm_failure_in_a_batch_exits_1(llm_server: ScriptedLLMServer) -> None:
    for _ in range(3):
        llm_server.fail(500, "down")
    result = run_cli(["delegate", "--task-template", "Help me with {{ item }}", "--items", "-",
                      "--no-fallback"], input="a\nb\n", env=llm_server.env(max_retries=0))
    assert result.exit_code == 1
    assert [json.loads(x)["reason"] for x in result.stdout.splitlines()] == ["llm_error"] * 2
    assert "2 none (2 of them LLM failures), 0 failed" in result.stderr
