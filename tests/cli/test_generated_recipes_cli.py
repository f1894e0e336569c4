"""Generated recipes are used: the fallback's vogon recipe runs, the gremium becomes a council."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from helpers import run_cli
from llm_server import ScriptedLLMServer

MEMBERS = [{"name": "Anna", "persona": "Baker for 30 years; guards quality and craft."},
           {"name": "Ben", "persona": "Accountant; watches cash flow and rent."},
           {"name": "Cem", "persona": "Regular customer; wants short walks and fresh rolls."}]

COUNCIL_REPLY = """<think>The members become heads of a zaphod council.</think>
Here is the recipe:

```yaml
name: shop-council
title: Bakery advisory council
engine: zaphod
description: >-
  The bakery's advisory council: Anna, Ben and Cem each answer a business
  question from their perspective, then a synthesis recommends one way.
tags: [council, advice, bakery, beirat]
params:
  pattern: COUNCIL
  heads:
    - {name: anna, persona: "Baker for 30 years; guards quality and craft."}
    - {name: ben, persona: "Accountant; watches cash flow and rent."}
    - {name: cem, persona: "Regular customer; wants short walks and fresh rolls."}
```
"""

VOGON_REPLY = """Sure. A phased recipe fits best:

```yaml
name: grant-application
title: Grant application in two phases
engine: vogon
description: >-
  Writes a grant application: first collects the project's facts, then
  writes the application text from them.
tags: [grant application, write an application, förderantrag]
params:
  phases:
    - name: facts
      prompt: List the project's facts a funder needs.
      input: "{{ task }}"
    - name: application
      prompt: Write the application from the facts.
      input: "Facts: {{ phases.facts }}"
```
"""


def _match(recipe: str) -> str:
    return json.dumps({"decision": "MATCH", "recipe": recipe, "rationale": "fits"})


def _texts(request: Any) -> str:
    return "\n".join(m["content"] for m in request.json["messages"])


def test_a_none_with_fallback_runs_the_generated_vogon_recipe(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "no grant recipe"}')
    llm_server.reply(VOGON_REPLY)
    llm_server.reply("FACTS: 3 staff, 40k budget")
    llm_server.reply("APPLICATION: Dear funder …")
    result = run_cli(["delegate", "--task", "apply for a village festival grant", "--wait",
                      "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert data["fallback"]["outcome"] == "GENERATED"
    process = data["process"]
    assert process["engine"] == "vogon" and process["recipe"].endswith("/grant-application")
    assert (process["status"], process["closeReason"]) == ("CLOSED", "DONE")
    assert process["result"] == "APPLICATION: Dear funder …"
    slart, facts, application = llm_server.chat_requests[1:]
    assert "maxWorkerSpawns" in _texts(slart)  # the prompt carries the params schemas
    assert "apply for a village festival grant" in _texts(facts)
    assert "Facts: FACTS: 3 staff" in _texts(application)


def test_a_generated_recipe_whose_worker_does_not_exist_is_sent_back(
        llm_server: ScriptedLLMServer) -> None:
    broken = VOGON_REPLY.replace("      prompt: List the project's facts a funder needs.\n",
                                 "      worker: fact-finder\n")
    llm_server.reply('{"decision": "NONE", "recipe": null, "rationale": "none"}')
    llm_server.reply(broken)
    llm_server.reply(VOGON_REPLY)
    llm_server.reply("F")
    llm_server.reply("A")
    result = run_cli(["delegate", "--task", "apply for a village festival grant", "--wait",
                      "--json"], env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    repair = llm_server.chat_requests[2].json["messages"][-1]["content"]
    assert "params.phases[0].worker: 'fact-finder' is not an existing recipe" in repair
    assert result.json()["process"]["closeReason"] == "DONE"


def test_the_gremium_wizard_becomes_a_council_that_can_be_asked_later(
        llm_server: ScriptedLLMServer, tmp_path: Path, project_dir: Path) -> None:
    values = tmp_path / "gremium.yaml"
    values.write_text(yaml.safe_dump({
        "councilName": "shop-council", "purpose": "Advise the bakery on business decisions.",
        "members": MEMBERS, "createNow": False}))
    llm_server.reply(_match("slartibartfast"))
    llm_server.reply(COUNCIL_REPLY)
    sent = run_cli(["wizard", "run", "gremium", "--values", str(values), "--no-input",
                    "--json"], env=llm_server.env())
    assert sent.exit_code == 0, sent.stderr
    decided = sent.json()
    assert decided["recipe"] == "slartibartfast"
    waited = run_cli(["process", "wait", decided["process"]["id"], "--json"],
                     env=llm_server.env())
    assert waited.exit_code == 0, waited.stderr
    slart = waited.json()["process"]
    assert slart["closeReason"] == "DONE"
    generated = slart["outcome"]["recipeName"]
    assert generated.startswith("_slart/") and generated.endswith("/shop-council")
    assert "vance recipe promote" in slart["result"]
    written = yaml.safe_load((project_dir / slart["outcome"]["recipePath"]).read_text())
    assert [h["name"] for h in written["params"]["heads"]] == ["anna", "ben", "cem"]

    promoted = run_cli(["recipe", "promote", generated, "shop-council", "--json"])
    assert promoted.exit_code == 0, promoted.stderr
    assert promoted.json()["path"] == str(project_dir / "recipes" / "shop-council.yaml")
    listed = [r["name"] for r in run_cli(["recipe", "list", "--json"]).json()]
    assert "shop-council" in listed

    llm_server.reply(_match("shop-council"))
    for member in MEMBERS:
        llm_server.reply(f"{member['name']}: open it only with a cheap lease")
    llm_server.reply("COUNCIL: open the second shop next spring, with a short lease")
    asked = run_cli(["delegate", "--task", "ask my shop council whether to open a second shop",
                     "--wait", "--json"], env=llm_server.env())
    assert asked.exit_code == 0, asked.stderr
    council = asked.json()["process"]
    assert (council["recipe"], council["engine"]) == ("shop-council", "zaphod")
    assert council["result"] == "COUNCIL: open the second shop next spring, with a short lease"
    assert "shop-council" in _texts(llm_server.chat_requests[-5])  # the selector saw it
    heads = council["outcome"]["heads"]
    assert sorted(h["name"] for h in heads) == ["anna", "ben", "cem"]
    assert all(h["status"] == "answered" for h in heads)


def test_promote_checks_the_source_and_the_name(project_dir: Path) -> None:
    (project_dir / "recipes" / "_slart" / "r1").mkdir(parents=True)
    (project_dir / "recipes" / "_slart" / "r1" / "bad.yaml").write_text(
        "engine: zaphod\ndescription: d\nparams:\n  pattern: parliament\n")
    (project_dir / "recipes" / "_slart" / "r1" / "good.yaml").write_text(
        "engine: ford\ndescription: A fine recipe.\n")
    bad = run_cli(["recipe", "promote", "_slart/r1/bad", "council"])
    assert bad.exit_code == 2 and "params.pattern" in bad.stderr
    assert not (project_dir / "recipes" / "council.yaml").exists()
    taken = run_cli(["recipe", "promote", "_slart/r1/good", "default"])
    assert taken.exit_code == 2 and "exists already" in taken.stderr
    hidden = run_cli(["recipe", "promote", "_slart/r1/good", "_mine"])
    assert hidden.exit_code == 2 and "must not start with '_'" in hidden.stderr
    forced = run_cli(["recipe", "promote", "_slart/r1/good", "default", "--force", "--json"])
    assert forced.exit_code == 0 and forced.json()["replaced"].endswith("recipes/default.yaml")
    shown = run_cli(["recipe", "show", "default", "--json"]).json()
    assert shown["layer"] == "PROJECT" and shown["description"] == "A fine recipe."
    text = (project_dir / "recipes" / "default.yaml").read_text()
    assert text.startswith("# promoted from _slart/r1/good on ")
    assert (project_dir / "recipes" / "default.yaml").stat().st_mode & 0o777 == 0o644
    suffixed = run_cli(["recipe", "promote", "_slart/r1/good", "shop.yaml"])
    assert suffixed.exit_code == 2 and "give the name without it ('shop')" in suffixed.stderr
    long = run_cli(["recipe", "promote", "_slart/r1/good", "x" * 300])
    assert long.exit_code == 2 and "300 characters long; at most 64" in long.stderr
    (project_dir / "recipes" / "_slart" / "r1" / "alien.yaml").write_text(
        "engine: deep-thought\ndescription: Computes answers.\n")
    alien = run_cli(["recipe", "promote", "_slart/r1/alien", "alien"])
    assert alien.exit_code == 2 and "not in the active engine catalog" in alien.stderr
