"""The LLM call a turn has under way (``calls_in_flight``), on both stores."""

from __future__ import annotations

from helpers import make_process

from vance_cli.base.config import load_settings
from vance_cli.state import conversation
from vance_cli.workspace import Workspace


def _calls(ws: Workspace, process_id: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in ws.db.query(
        "SELECT turn, purpose, model, endpoint, tokens_in, tokens_out, error FROM llm_calls"
        " WHERE process_id = ? ORDER BY id", (process_id,))]


def test_a_call_under_way_is_cut_off_with_the_chunks_stored_so_far() -> None:
    ws = Workspace(load_settings())
    try:
        pid = make_process(ws, "flying")
        with ws.db.transaction():
            conversation.start_call(ws.db, pid, 1, "plan", model="m1", endpoint="http://a/v1")
            conversation.start_call(ws.db, pid, 1, "reply", model="m2", endpoint="http://b/v1")
            conversation.call_progress(ws.db, pid, 1, 7)
        with ws.db.transaction():
            assert conversation.cut_off_calls(ws.db, pid, "cut off: the worker died") == 1
        assert _calls(ws, pid) == [(1, "reply", "m2", "http://b/v1", None, 7,
                                    "cut off: the worker died")]
        assert conversation.llm_totals(ws.db, pid)[2] == 7
        with ws.db.transaction():  # the worker, had it lived, finds its call recorded
            assert conversation.land_call(ws.db, pid, 1) is False
    finally:
        ws.close()


def test_a_call_that_lands_leaves_nothing_to_cut_off() -> None:
    ws = Workspace(load_settings())
    try:
        pid = make_process(ws, "landed")
        with ws.db.transaction():
            conversation.start_call(ws.db, pid, 2, "reply", model=None, endpoint=None)
        with ws.db.transaction():
            assert conversation.land_call(ws.db, pid, 2) is True
            conversation.call_progress(ws.db, pid, 2, 3)  # a late heartbeat changes nothing
            assert conversation.cut_off_calls(ws.db, pid, "cut off") == 0
        assert _calls(ws, pid) == []
    finally:
        ws.close()


def test_a_call_cut_off_before_any_text_has_no_tokens_out() -> None:
    ws = Workspace(load_settings())
    try:
        pid = make_process(ws, "silent")
        with ws.db.transaction():
            conversation.start_call(ws.db, pid, 1, "reply", model="m", endpoint=None)
            conversation.cut_off_calls(ws.db, pid, "cut off")
        assert _calls(ws, pid) == [(1, "reply", "m", None, None, None, "cut off")]
    finally:
        ws.close()
