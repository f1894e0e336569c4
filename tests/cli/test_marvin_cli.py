"""marvin end to end: plan, selector-routed workers, item fan-out, limits, the drawn tree."""

from __future__ import annotations

import json
from typing import Any

from helpers import CliResult, run_cli
from llm_server import ScriptedLLMServer

GOAL = "Prepare the relaunch of our bakery's website"


def _plan(tasks: list[dict[str, Any]]) -> str:
    return ("<think>Break it down.</think>\nHere is the plan:\n```json\n"
            + json.dumps({"goal": "Relaunch the website", "tasks": tasks}) + "\n```\nDone.")


def _match(recipe: str) -> str:
    return json.dumps({"decision": "MATCH", "recipe": recipe, "rationale": "fits"})


def _run(llm_server: ScriptedLLMServer, *extra: str) -> CliResult:
    return run_cli(["process", "create", "--recipe", "marvin", "--name", "m", "--goal", GOAL,
                    "--wait", "--json", *extra], env=llm_server.env())


def _purposes(llm_server: ScriptedLLMServer) -> list[str]:
    return [r.json["messages"][0]["content"][:40] for r in llm_server.chat_requests]


def test_tasks_without_a_recipe_go_through_the_selector(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_plan([
        {"goal": "Translate the opening hours into German", "recipe": "translate"},
        {"goal": "List the pages the new site needs"},
        {"goal": "Compare three hosting offers by price"},
    ]))
    llm_server.reply("Öffnungszeiten: Mo-Fr 7-18 Uhr")
    llm_server.reply(_match("analyze"))
    llm_server.reply("Pages: home, menu, contact")
    llm_server.reply("Some prose first.\n" + _match("web-research"))
    llm_server.reply("Hosting: A 5 €, B 7 €, C 9 €")
    llm_server.reply("RELAUNCH PLAN: pages, hosting B, German hours", chunks=5)
    result = _run(llm_server)
    assert result.exit_code == 0, result.stderr
    process = result.json()
    assert (process["status"], process["closeReason"]) == ("CLOSED", "DONE")
    assert process["result"] == "RELAUNCH PLAN: pages, hosting B, German hours"
    requests = llm_server.chat_requests
    assert len(requests) == 7
    selector = [r for r in requests if "recipe selector" in r.json["messages"][0]["content"]
                or "MATCH" in r.json["messages"][0]["content"]]
    assert len(selector) == 2
    aggregate = "\n".join(m["content"] for m in requests[-1].json["messages"])
    for text in ("Öffnungszeiten", "Pages: home", "Hosting: A"):
        assert text in aggregate
    kids = [p for p in run_cli(["process", "list", "--json"]).json()
            if p["parentProcessId"] == process["id"]]
    assert sorted(k["recipe"] for k in kids) == ["analyze", "translate", "web-research"]
    tree = process["outcome"]["tree"]
    assert [n["status"] for n in tree["children"]] == ["done", "done", "done"]
    assert [n.get("selector") for n in tree["children"]] == [None, "analyze", "web-research"]
    shown = run_cli(["process", "show", process["id"]]).stdout
    assert "tree:" in shown and "2 List the pages the new site needs — done (analyze" in shown


def test_an_items_task_asks_the_selector_once_and_starts_one_child_per_item(
        llm_server: ScriptedLLMServer) -> None:
    items = ["bread", "rolls", "cake", "coffee", "tea"]
    llm_server.reply(_plan([{"goal": "Translate the product names", "items": items,
                             "template": "Translate the product name '{{ item }}' into French"}]))
    llm_server.reply(_match("translate"))
    for item in items:
        llm_server.reply(f"FR({item})")
    llm_server.reply("ALL FRENCH NAMES")
    result = _run(llm_server)
    assert result.exit_code == 0, result.stderr
    requests = llm_server.chat_requests
    assert len(requests) == 1 + 1 + 5 + 1
    assert "{{ item }}" not in json.dumps(requests[1].json)  # the template's shape was asked
    for item, request in zip(items, requests[2:7], strict=True):
        assert f"'{item}' into French" in request.json["messages"][-1]["content"]
    process = result.json()
    kids = [p for p in run_cli(["process", "list", "--json"]).json()
            if p["parentProcessId"] == process["id"]]
    assert len(kids) == 5 and {k["recipe"] for k in kids} == {"translate"}
    node = process["outcome"]["tree"]["children"][0]
    assert node["selector"] == "translate" and len(node["children"]) == 5
    assert all(k["status"] == "done" for k in node["children"])


def test_a_failed_task_is_marked_and_the_others_go_on(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_plan([{"goal": "Write the menu text", "recipe": "no-such-recipe"},
                            {"goal": "Draft the about page", "recipe": "default"}]))
    llm_server.reply("ABOUT PAGE")
    llm_server.reply("PARTIAL RESULT")
    result = _run(llm_server)
    assert result.exit_code == 0, result.stderr
    outcome = result.json()["outcome"]
    assert outcome["failed"] == ["1"] and outcome["succeeded"] == 1
    first = outcome["tree"]["children"][0]
    assert first["status"] == "failed" and "no-such-recipe" in first["error"]
    assert "1 of 2 tasks" in llm_server.chat_requests[-1].json["messages"][0]["content"]


def test_an_oversized_plan_is_asked_again_once_then_ends_with_the_reason(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_plan([{"goal": f"Task number {n}"} for n in range(1, 32)]))
    llm_server.reply(_plan([{"goal": f"Task number {n}"} for n in range(1, 33)]))
    result = _run(llm_server)
    assert result.exit_code == 1
    process = result.json()
    assert process["closeReason"] == "STALE"
    assert process["outcome"]["reason"] == (
        "the plan has 32 tasks and items: over the limit of 30 (params.maxTreeNodes);"
        " nothing was started")
    assert len(llm_server.chat_requests) == 2
    asked = llm_server.chat_requests[1].json["messages"][-1]["content"]
    assert asked == ("Your plan breaks a limit: the plan has 31 tasks and items: over the"
                     " limit of 30 (params.maxTreeNodes). Answer with a flat list of at most"
                     " 30 tasks, without sub-tasks or items.")
    assert [p for p in run_cli(["process", "list", "--json"]).json()
            if p["parentProcessId"] == process["id"]] == []


def test_a_plan_too_deep_is_refused(llm_server: ScriptedLLMServer) -> None:
    deep: dict[str, Any] = {"goal": "level 3"}
    for level in (2, 1):
        deep = {"goal": f"level {level}", "tasks": [deep]}
    llm_server.reply(_plan([deep]))
    llm_server.reply(_plan([deep]))
    result = _run(llm_server, "--param", "maxTreeDepth:=2")
    assert result.exit_code == 1
    assert "3 levels deep" in result.json()["outcome"]["reason"]


def test_a_plan_over_a_limit_then_one_that_fits_runs(llm_server: ScriptedLLMServer) -> None:
    """The second ask names the limit; a plan that then keeps it runs as any other."""
    llm_server.reply(_plan([{"goal": "Write the imprint", "recipe": "default",
                             "items": ["a", "b", "c"]}]))
    llm_server.reply(_plan([{"goal": "Write the imprint", "recipe": "default"}]))
    llm_server.reply("IMPRINT")
    llm_server.reply("DONE")
    result = _run(llm_server, "-p", "maxItems:=2")
    assert result.exit_code == 0, result.stderr
    assert result.json()["result"] == "DONE"
    second = llm_server.chat_requests[1].json
    assert "task 1 has 3 items: over the limit of 2 (params.maxItems)" in \
        second["messages"][-1]["content"]
    fmt = second["response_format"]
    schema = fmt["json_schema"]["schema"] if "json_schema" in fmt else fmt["schema"]
    assert schema["properties"]["tasks"]["maxItems"] == 30  # a flat list: no plan breaks it
    assert set(schema["$defs"]) == {"task"}
    assert set(schema["$defs"]["task"]["properties"]) == {"goal", "recipe"}


def test_marvin_never_runs_marvin(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_plan([{"goal": "Plan the whole thing again", "recipe": "marvin"},
                            {"goal": "Write the imprint", "recipe": "default"}]))
    llm_server.reply("IMPRINT")
    llm_server.reply("DONE")
    result = _run(llm_server)
    assert result.exit_code == 0, result.stderr
    first = result.json()["outcome"]["tree"]["children"][0]
    assert first["status"] == "failed" and "marvin does not run marvin" in first["error"]


def test_the_llm_call_limit_skips_the_tasks_left_and_names_them(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_plan([{"goal": f"Write section {n}", "recipe": "default"}
                            for n in (1, 2, 3)]))
    llm_server.reply("SECTION 1")
    llm_server.reply("SECTION 2")
    llm_server.reply("TWO OF THREE")
    result = _run(llm_server, "--param", "maxLlmCalls:=3")
    assert result.exit_code == 0, result.stderr
    tree = result.json()["outcome"]["tree"]["children"]
    assert [n["status"] for n in tree] == ["done", "done", "skipped"]
    assert "params.maxLlmCalls" in tree[2]["error"]
    assert result.json()["outcome"]["failed"] == ["3"]
    assert len(llm_server.chat_requests) == 4


def test_a_task_whose_worker_stops_to_ask_the_person_fails_with_the_question(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(_plan([{"goal": "Build the login", "recipe": "waterfall-feature"},
                            {"goal": "Write the imprint", "recipe": "default"}]))
    llm_server.reply("REQUIREMENTS: e-mail and password")
    llm_server.reply("IMPRINT")
    llm_server.reply("HALF DONE")
    result = _run(llm_server)
    assert result.exit_code == 0, result.stderr
    first = result.json()["outcome"]["tree"]["children"][0]
    assert first["status"] == "failed"
    assert "it stopped to ask the person" in first["error"]
    assert "Are these requirements complete and right?" in first["error"]
    kids = {p["recipe"]: p for p in run_cli(["process", "list", "--json"]).json()}
    assert kids["waterfall-feature"]["closeReason"] == "STALE"  # never left waiting


def test_the_plan_request_names_only_recipes_that_exist(llm_server: ScriptedLLMServer) -> None:
    """The plan's schema gives each task's recipe as an enum (a grammar on llama.cpp)."""
    llm_server.reply(_plan([{"goal": "Translate the opening hours", "recipe": "translate"}]))
    llm_server.reply("Öffnungszeiten")
    llm_server.reply("DONE")
    result = _run(llm_server, "-p", 'availableRecipes:=["translate", "default"]')
    assert result.exit_code == 0, result.stderr
    fmt = llm_server.chat_requests[0].json["response_format"]
    schema = fmt["json_schema"]["schema"] if "json_schema" in fmt else fmt["schema"]
    assert schema["$defs"]["task"]["properties"]["recipe"] == {"enum": ["default", "translate"]}


def test_the_plan_schema_carries_the_limits(llm_server: ScriptedLLMServer) -> None:
    """Each list of the plan's schema has a maxItems and the levels stop at maxTreeDepth, so
    a grammar-constrained model cannot write tasks past the limits (a runaway plan)."""
    llm_server.reply(_plan([{"goal": "Write the imprint", "recipe": "default"}]))
    llm_server.reply("IMPRINT")
    llm_server.reply("DONE")
    result = _run(llm_server, "-p", "maxTreeNodes:=4", "-p", "maxItems:=2",
                  "-p", "maxTreeDepth:=2")
    assert result.exit_code == 0, result.stderr
    fmt = llm_server.chat_requests[0].json["response_format"]
    schema = fmt["json_schema"]["schema"] if "json_schema" in fmt else fmt["schema"]
    tasks = schema["properties"]["tasks"]
    assert (tasks["minItems"], tasks["maxItems"], tasks["items"]) == (
        1, 4, {"$ref": "#/$defs/task"})
    top, second = schema["$defs"]["task"]["properties"], schema["$defs"]["task-2"]["properties"]
    assert top["items"]["maxItems"] == 2 and second["items"]["maxItems"] == 2
    assert top["tasks"] == {"type": "array", "items": {"$ref": "#/$defs/task-2"}, "maxItems": 3}
    assert "tasks" not in second  # the second level is the last
    assert set(schema["$defs"]) == {"task", "task-2"}


def test_an_unreadable_plan_is_asked_again_for_a_flat_list(
        llm_server: ScriptedLLMServer) -> None:
    """A reply cut off at the token cap gets the flat schema: a shape a model cannot run on."""
    llm_server.reply('{"goal": "Relaunch", "tasks": [{"goal": "a", "items": ["x", "x", "x"',
                     finish_reason="length")
    llm_server.reply(_plan([{"goal": "Write the imprint", "recipe": "default"}]))
    llm_server.reply("IMPRINT")
    llm_server.reply("DONE")
    result = _run(llm_server)
    assert result.exit_code == 0, result.stderr
    second = llm_server.chat_requests[1].json
    assert second["messages"][-1]["content"] == (
        "Answer with the JSON object only, with a flat list of at most 30 tasks, without"
        " sub-tasks or items.")
    fmt = second["response_format"]
    schema = fmt["json_schema"]["schema"] if "json_schema" in fmt else fmt["schema"]
    assert set(schema["$defs"]) == {"task"}
    assert set(schema["$defs"]["task"]["properties"]) == {"goal", "recipe"}
