"""One wall-clock deadline per LLM call, on a timer (docs/configuration.md "Deadlines and caps").

Hostile scripted servers: a reply trickled one byte at a time, keep-alive lines
only. Each would pass the HTTP client's per-read timeout forever; the guard's
timer ends the call. Bounds are the acceptance's, generous: "ended", not "fast".
"""

from __future__ import annotations

import threading
import time

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base.errors import LLMError
from vance_cli.llm import LLMConfig, complete

MESSAGES = [{"role": "user", "content": "hi"}]
SLACK = 1.5
"""Seconds past a deadline by which the call must have ended (the issue allows 1 s; the
rest is for a loaded test machine)."""


def _config(server: ScriptedLLMServer, timeout: float = 1.0, max_retries: int = 2) -> LLMConfig:
    return LLMConfig(base_url=server.url, api_key=None, model="m", timeout=timeout,
                     max_retries=max_retries, json_mode="none")


def _fails(server: ScriptedLLMServer, config: LLMConfig, stream: bool,
           deadline: float | None = None) -> tuple[LLMError, float]:
    began = time.monotonic()
    with pytest.raises(LLMError) as info:
        complete(config, MESSAGES, on_text=(lambda piece: None) if stream else None,
                 deadline=deadline)
    return info.value, time.monotonic() - began


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
def test_a_trickling_reply_ends_at_the_attempts_wall_clock_deadline(
        llm_server: ScriptedLLMServer, stream: bool) -> None:
    llm_server.trickle("The capital of Peru is Lima.", every=0.3)  # each read well in time
    error, took = _fails(llm_server, _config(llm_server, timeout=1.0), stream)
    assert error.timeout and "timed out after 1 s (wall clock" in error.message
    assert took < 1.0 + SLACK
    assert len(llm_server.chat_requests) == 1  # a spent deadline is not retried


def test_keep_alive_lines_alone_do_not_keep_a_call_open(llm_server: ScriptedLLMServer) -> None:
    llm_server.keep_alive(every=0.2)
    error, took = _fails(llm_server, _config(llm_server, timeout=1.0), stream=True)
    assert error.timeout and took < 1.0 + SLACK


def test_the_callers_deadline_ends_the_call_and_is_named(llm_server: ScriptedLLMServer) -> None:
    llm_server.trickle("The capital of Peru is Lima.", every=0.3)
    error, took = _fails(llm_server, _config(llm_server, timeout=60), True,
                         deadline=time.monotonic() + 1.0)
    assert error.timeout and "left to the turn" in error.message
    assert took < 1.0 + SLACK


def test_a_silent_server_is_still_retried_and_the_attempts_that_ran_are_counted(
        llm_server: ScriptedLLMServer) -> None:
    never = threading.Event()
    llm_server.reply("late", gate=never)
    llm_server.reply("late", gate=never)
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server, timeout=0.5, max_retries=1), MESSAGES)
    assert "2 attempts" in info.value.message and len(llm_server.chat_requests) == 2


def test_a_timeout_says_one_attempt_when_the_deadline_left_room_for_one(
        llm_server: ScriptedLLMServer) -> None:
    """Issue 26: "timed out … 3 attempts" when one ran; the deadline allowed no retry."""
    llm_server.reply("late", gate=threading.Event())
    llm_server.reply("late", gate=threading.Event())
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server, timeout=0.5, max_retries=2), MESSAGES,
                 deadline=time.monotonic() + 0.8)
    assert len(llm_server.chat_requests) == 1  # the backoff (>= 0.375 s) passed the deadline
    assert info.value.timeout and "attempts" not in info.value.message


def test_a_reply_in_time_is_untouched(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("The capital of Peru is Lima.", chunks=5)
    answer = complete(_config(llm_server), MESSAGES, on_text=lambda piece: None,
                      deadline=time.monotonic() + 30)
    assert (answer.text, answer.finish_reason, answer.truncated) == (
        "The capital of Peru is Lima.", "stop", None)
