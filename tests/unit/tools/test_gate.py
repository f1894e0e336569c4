"""The gate: floor, then deny, then allow, then ask, then the default by label."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from vance_cli.base.config import load_settings
from vance_cli.tools.gate import (
    Rules,
    call_subject,
    config_rules,
    decide,
    refusal_text,
    yes_tools_rules,
)
from vance_cli.tools.registry import builtin
from vance_cli.tools.tool import Tool, ToolContext, ToolLabel, ToolResult


def mcp_tool(name: str = "srv.search") -> Tool:
    def run(args: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult("x")

    return Tool(name=name, description="d", label=ToolLabel.READ_ONLY, source="srv",
                parameters={"type": "object", "properties": {"query": {"type": "string"}},
                            "required": ["query"]}, run=run)


@pytest.mark.parametrize(("name", "args", "decision"), [
    ("read_file", {"path": "src/app.py"}, "allow"),
    ("list_files", {}, "allow"),
    ("search_files", {"pattern": "x"}, "allow"),
    ("write_file", {"path": "a.txt", "content": "x"}, "ask"),
    ("run_command", {"argv": ["ls"]}, "ask"),
    ("fetch_url", {"url": "https://example.org/"}, "ask"),
])
def test_defaults_follow_the_label(name: str, args: dict[str, Any], decision: str,
                                   context: ToolContext) -> None:
    verdict = decide(builtin(name), args, Rules(), context)
    assert verdict.decision == decision
    assert verdict.rule.startswith("default:")


def test_an_mcp_tool_asks_unless_allowed_even_when_labelled_read_only() -> None:
    assert decide(mcp_tool(), {"query": "q"}, Rules()).decision == "ask"
    assert decide(mcp_tool(), {"query": "q"}, Rules.of(allow=["srv.*"])).decision == "allow"
    assert decide(mcp_tool(), {"query": "q"}, Rules.of(allow=["other.*"])).decision == "ask"


def test_deny_wins_over_allow_and_allow_over_ask(context: ToolContext) -> None:
    tool = builtin("fetch_url")
    url = {"url": "https://docs.python.org/3/library/re.html"}
    both = Rules.of(allow=["fetch_url"], deny=["fetch_url(https://docs.python.org/*)"])
    assert decide(tool, url, both, context).decision == "deny"
    allow_ask = Rules.of(allow=["fetch_url(https://docs.python.org/*)"], ask=["fetch_url"])
    verdict = decide(tool, url, allow_ask, context)
    assert verdict.decision == "allow"
    assert verdict.rule == "tools.allow: fetch_url(https://docs.python.org/*)"
    other = decide(tool, {"url": "https://evil.example/"}, allow_ask, context)
    assert other.decision == "ask" and other.rule == "tools.ask: fetch_url"


def test_an_ask_rule_overrides_the_read_only_default(context: ToolContext) -> None:
    verdict = decide(builtin("read_file"), {"path": "secrets.txt"},
                     Rules.of(ask=["read_file(secret*)"]), context)
    assert verdict.decision == "ask"


def test_path_arguments_match_project_relative_and_normalised(context: ToolContext) -> None:
    tool = builtin("write_file")
    rules = Rules.of(allow=["write_file(docs/*)"], deny=["write_file(src/*)"])
    assert decide(tool, {"path": "docs/a.md", "content": ""}, rules, context).decision == "allow"
    sneaky = {"path": "./docs/../src/app.py", "content": ""}
    assert call_subject(tool, sneaky, context) == "src/app.py"
    assert decide(tool, sneaky, rules, context).decision == "deny"


def test_the_deny_floor_comes_before_every_rule(context: ToolContext) -> None:
    allow_all = Rules.of(allow=["*"])
    (context.project / ".env").write_text("K=v")
    for name, args in (("read_file", {"path": ".env"}),
                       ("write_file", {"path": str(context.home / ".ssh/authorized_keys"),
                                       "content": "x"}),
                       ("run_command", {"argv": ["cat", str(context.home / ".aws/credentials")]}),
                       ("read_file", {"path": str(context.state_dir / "vance.db")})):
        verdict = decide(builtin(name), args, allow_all, context)
        assert verdict.decision == "deny" and verdict.rule == "deny floor", name
        assert "no rule can allow it" in verdict.why


def test_a_symlink_onto_the_floor_is_denied_by_the_gate(context: ToolContext) -> None:
    (context.home / ".ssh").mkdir()
    (context.project / "k").symlink_to(context.home / ".ssh")
    verdict = decide(builtin("read_file"), {"path": "k/id_rsa"}, Rules.of(allow=["*"]), context)
    assert verdict.decision == "deny"


def test_command_patterns_match_the_argv_joined(context: ToolContext) -> None:
    tool = builtin("run_command")
    rules = Rules.of(allow=["run_command(git status*)", "run_command(pytest *)"],
                     deny=["run_command(git push*)"])
    assert decide(tool, {"argv": ["git", "status", "-s"]}, rules, context).decision == "allow"
    assert decide(tool, {"argv": ["git", "push"]}, rules, context).decision == "deny"
    assert decide(tool, {"argv": ["rm", "-rf", "x"]}, rules, context).decision == "ask"


def test_label_patterns_and_sources(context: ToolContext) -> None:
    rules = Rules.of(allow=["@network"], source="recipe web-research").merged(
        yes_tools_rules(["write_file"]))
    fetch = decide(builtin("fetch_url"), {"url": "https://a.example/"}, rules, context)
    assert fetch.decision == "allow" and fetch.rule == "tools.allow: @network (recipe web-research)"
    write = decide(builtin("write_file"), {"path": "a", "content": ""}, rules, context)
    assert write.decision == "allow" and "--yes-tools" in write.rule


def test_config_rules_come_from_the_settings(tmp_path: Any) -> None:
    settings = load_settings(environ={"VANCE_HOME": str(tmp_path),
                                      "VANCE_TOOLS_DENY": "fetch_url, run_command(rm *)"})
    rules = config_rules(settings)
    assert rules.deny == ("fetch_url", "run_command(rm *)") and rules.allow == ()


def test_refusal_texts_tell_the_model_what_happened(context: ToolContext) -> None:
    verdict = decide(builtin("write_file"), {"path": "a", "content": ""}, Rules(), context)
    assert "no one can be asked" in refusal_text(verdict, "write_file")
    assert "declined" in refusal_text(verdict, "write_file", asked=True)
    denied = decide(builtin("fetch_url"), {"url": "x"}, Rules.of(deny=["fetch_url"]), context)
    assert "tools.deny: fetch_url" in refusal_text(denied, "fetch_url")
