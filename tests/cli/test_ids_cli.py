"""Tenant, project, user and session ids reach no folder outside VANCE_HOME (DESIGN.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_cli, slart_recipe_reply
from llm_server import ScriptedLLMServer

NONE = '{"decision": "NONE", "recipe": null, "rationale": "nothing fits"}'


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--project", "../../../../{out}/evil"], "project"),
        (["--tenant", "../../../../{out}"], "tenant"),
        (["--user", "../../{out}"], "user"),
        (["--session", "a/../../b"], "session"),
    ],
)
def test_bad_id_flag_stops_delegate_before_the_llm(
        llm_server: ScriptedLLMServer, tmp_path: Path, args: list[str], key: str) -> None:
    out = tmp_path / "outside"
    llm_server.reply(NONE)
    llm_server.reply(slart_recipe_reply())
    flags = [a.replace("{out}", str(out).lstrip("/")) for a in args]
    result = run_cli([*flags, "delegate", "--task", "Turn off the kitchen lights", "--json"],
                     env=llm_server.env())
    assert result.exit_code == 2
    assert result.json()["error"] == "config_error" and result.json()["key"] == key
    assert result.stderr.startswith(f"vance: error: {key} (--{key}): {key} id ")
    assert llm_server.chat_requests == [] and not out.exists()


def test_config_set_refuses_a_bad_id_and_can_repair_a_bad_file(vance_home: Path) -> None:
    bad = run_cli(["config", "set", "project", "../../x"])
    assert bad.exit_code == 2 and "project id '../../x'" in bad.stderr
    assert not (vance_home / "config.yaml").exists()
    # A file written by hand (or by an older vance) stops every command that reads settings…
    vance_home.mkdir(parents=True, exist_ok=True)
    (vance_home / "config.yaml").write_text("tenant: ../../../../etc\n")
    listed = run_cli(["recipe", "list"])
    assert listed.exit_code == 2 and "tenant (" in listed.stderr and "config.yaml" in listed.stderr
    # …but `config set` only needs the folders, so it can repair it.
    assert run_cli(["config", "set", "tenant", "acme"]).exit_code == 0
    assert run_cli(["recipe", "list"]).exit_code == 0


def test_env_id_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VANCE_TENANT", "../../../../etc")
    result = run_cli(["recipe", "list", "--json"])
    assert result.exit_code == 2
    assert "tenant (env:VANCE_TENANT): tenant id" in result.stderr
