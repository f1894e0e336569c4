"""The JSON documents of process show, result and steer: their keys are pinned."""

from __future__ import annotations

from vance_cli.processes.inputs import submit
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process
from vance_cli.processes.views import result_json, show_json, steer_json
from vance_cli.workspace import Workspace

PROCESS_KEYS = {"id", "name", "session", "recipe", "engine", "title", "goal", "params",
                "steerContent", "status", "closeReason", "parentProcessId", "createdAt",
                "result", "outcome", "state"}


def test_show_is_the_process_object_with_turns_and_llm_totals(ws: Workspace) -> None:
    process = create_process(ws, ProcessSpec(recipe="coding", name="tea"))
    data = show_json(ws, process)
    assert set(data) == PROCESS_KEYS | {"turns", "llm", "inputWaiting"}
    assert data["turns"] == 0 and data["inputWaiting"] == 0
    assert data["llm"] == {"calls": 0, "tokensIn": 0, "tokensOut": 0, "latencyMs": 0}


def test_result_without_an_answer_has_a_null_result(ws: Workspace) -> None:
    process = create_process(ws, ProcessSpec(recipe="coding", name="tea"))
    assert result_json(process) == {"processId": process.id, "status": "IDLE",
                                    "closeReason": None, "result": None, "outcome": None}


def test_steer_holds_the_message_and_the_process(ws: Workspace) -> None:
    process = create_process(ws, ProcessSpec(recipe="coding", name="tea"))
    data = steer_json(submit(ws, process.id, "And now in Python"), process)
    assert set(data) == {"message", "process"}
    assert data["message"]["text"] == "And now in Python" and data["message"]["turn"] is None
    assert set(data["process"]) == PROCESS_KEYS
