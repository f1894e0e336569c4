"""Plugin engines: the example of docs/engines.md "Writing an engine", installed and run.

The plugin is a real distribution on ``sys.path`` (a ``.dist-info`` folder
with ``entry_points.txt``), found by ``importlib.metadata`` as an installed
one is; its module is the page's example, taken from the page itself.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import build_file_tree, run_cli
from llm_server import ScriptedLLMServer

from vance_cli.base.paths import bundled_dir
from vance_cli.engines.registry import EngineRegistry

DOCS = Path(__file__).resolve().parents[3] / "docs" / "engines.md"
BUNDLED_CATALOG = (bundled_dir("catalog") / "engines.yaml").read_text(encoding="utf-8")
TERSE = ("  terse:\n    purpose: Answers any question in very few words.\n"
         "    when_to_use: A short, plain answer is all the person wants.\n"
         "    not_for: Anything that needs explaining at length.\n")
ANSWER = "Tea is a brewed leaf drink from China."


def example_engine() -> str:
    """The first Python block of the page's "Writing an engine" section."""
    section = DOCS.read_text(encoding="utf-8").split("## Writing an engine", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


@pytest.fixture()
def terse_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example engine installed as distribution ``vance-terse`` (entry point ``terse``)."""
    site = tmp_path / "site"
    build_file_tree(site, {
        "vance_terse/__init__.py": example_engine(),
        "vance_terse-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: vance-terse\n"
                                              "Version: 0.1\n",
        "vance_terse-0.1.dist-info/entry_points.txt": "[vance.engines]\nterse = vance_terse\n",
    })
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("vance_terse", None)


def test_the_example_is_about_thirty_lines() -> None:
    assert 25 <= len(example_engine().strip().splitlines()) <= 40


def test_a_plugin_is_found_by_name_and_a_bundled_name_wins(terse_plugin: Path) -> None:
    engines = EngineRegistry()
    assert "terse" in engines.names() and engines.names()[:1] == ["arthur"]
    terse = engines.get("terse")
    assert terse is not None and terse.run_turn is not None and not terse.orchestrates
    assert engines.params_model("terse") is not None
    assert engines.get("deep-thought") is None
    assert engines.without_code(["ford", "terse", "deep-thought"]) == ["deep-thought"]


def test_a_recipe_bound_to_the_plugin_delegates_and_runs_a_turn(
        terse_plugin: Path, tmp_path: Path, project_dir: Path,
        llm_server: ScriptedLLMServer) -> None:
    build_file_tree(project_dir, {
        "recipes/terse-answer.yaml": """
            engine: terse
            description: Answer a question in a dozen words at most.
            params: {maxWords: 12}
            triggers:
              keywords: ["answer tersely"]
        """,
        "recipes/terse-broken.yaml": """
            engine: terse
            description: Params the plugin's schema refuses.
            params: {maxWords: 0}
        """})
    before = run_cli(["catalog", "show", "--json"]).json()
    assert "terse" not in {e["name"] for e in before["engines"]}  # no catalog entry yet
    catalog = tmp_path / "engines.yaml"
    catalog.write_text(BUNDLED_CATALOG.rstrip("\n") + "\n" + TERSE, encoding="utf-8")
    assert run_cli(["catalog", "reload", "--file", str(catalog), "--allow-orphans"]).exit_code == 0
    shown = run_cli(["catalog", "show", "--json"]).json()
    assert "terse" in {e["name"] for e in shown["engines"]} and shown["withoutCode"] == []

    listed = run_cli(["recipe", "list"])
    assert "recipe 'terse-broken' left out: " in listed.stderr
    assert "params.maxWords" in listed.stderr

    llm_server.reply(ANSWER, chunks=3)
    result = run_cli(["delegate", "--task", "Answer tersely: what is tea?", "--wait", "--json"],
                     env=llm_server.env())
    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert (data["recipe"], data["engine"]) == ("terse-answer", "terse")
    assert data["process"]["result"] == ANSWER
    [request] = llm_server.chat_requests
    assert request.json["messages"][0] == {"role": "system",
                                           "content": "Answer in at most 12 words."}
    assert "what is tea?" in request.json["messages"][-1]["content"]


def test_a_catalog_engine_without_code_is_reported(tmp_path: Path) -> None:
    catalog = tmp_path / "engines.yaml"
    catalog.write_text(BUNDLED_CATALOG.rstrip("\n") + "\n"
                       + TERSE.replace("terse", "deep-thought"), encoding="utf-8")
    assert run_cli(["catalog", "reload", "--file", str(catalog)]).exit_code == 0
    shown = run_cli(["catalog", "show", "--json"]).json()
    assert shown["withoutCode"] == ["deep-thought"]
