"""Byte and token caps on every reply, streamed or not (docs/configuration.md "Deadlines and caps").

Hostile scripted servers: a body that never ends, a 50 MB reply, invalid
UTF-8, stream events that are not JSON. The text so far is kept and marked
truncated; memory stays bounded (measured in a child process).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import REPO
from llm_server import ScriptedLLMServer

from vance_cli.base.errors import LLMError
from vance_cli.llm import LLMConfig, complete

MESSAGES = [{"role": "user", "content": "hi"}]
RSS_LIMIT_MB = 200
"""The issue's bound for an endless body."""


def _config(server: ScriptedLLMServer, max_reply_bytes: int = 1_000_000) -> LLMConfig:
    return LLMConfig(base_url=server.url, api_key=None, model="m", timeout=30, max_retries=0,
                     json_mode="none", max_reply_bytes=max_reply_bytes)


def _sink(piece: str) -> None:
    pass


def test_an_endless_stream_is_cut_at_the_byte_cap_and_kept_truncated(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.endless()
    answer = complete(_config(llm_server, max_reply_bytes=50_000), MESSAGES, max_tokens=10**6,
                      on_text=_sink)
    assert (answer.truncated, answer.finish_reason) == ("bytes", "length")
    assert len(answer.text.encode()) == 50_000 and set(answer.text) == {"x"}


def test_a_50_mb_stream_that_ignores_max_tokens_is_cut_at_the_token_cap(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.huge(50_000_000)
    seen: list[str] = []
    answer = complete(_config(llm_server), MESSAGES, max_tokens=20, on_text=seen.append)
    assert (answer.truncated, answer.finish_reason) == ("tokens", "length")
    assert answer.text == "y" * 20_000 == "".join(seen)
    assert answer.completion_tokens == 20


def test_an_endless_plain_body_fails_at_the_raw_cap_in_one_line(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.endless()
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server, max_reply_bytes=10_000), MESSAGES)
    assert "the reply is larger than 160000 bytes" in info.value.message
    assert info.value.details["reason"] == "reply_too_large"


def test_a_plain_reply_over_the_text_cap_is_cut_and_marked(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("é" * 1000)  # 2000 bytes; the cut falls inside no character
    answer = complete(_config(llm_server, max_reply_bytes=1001), MESSAGES)
    assert (answer.text, answer.truncated, answer.finish_reason) == ("é" * 500, "bytes",
                                                                     "length")


@pytest.mark.parametrize(("body", "stream", "reason"), [
    (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices":'
     b' [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",'
     b' "content": "\xff\xfe"}}]}', False, "not valid UTF-8"),
    (b'{"choices": [{"message": 5}]', False, "not valid JSON"),
], ids=["invalid-utf8", "cut-json"])
def test_malformed_plain_replies_get_one_line_reasons(
        llm_server: ScriptedLLMServer, body: bytes, stream: bool, reason: str) -> None:
    llm_server.raw(200, body)
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server), MESSAGES)
    assert reason in info.value.message
    assert "Error" not in info.value.message  # no raw exception class names


@pytest.mark.parametrize(("lines", "reason"), [
    ([b"data: not json"], "not valid JSON"),
    ([b'data: {"choices": 5}'], "malformed"),
    ([b"data: \xff\xfe"], "not valid UTF-8"),
], ids=["not-json", "bad-shape", "invalid-utf8"])
def test_malformed_stream_events_get_one_line_reasons(
        llm_server: ScriptedLLMServer, lines: list[bytes], reason: str) -> None:
    llm_server.sse(lines)
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server), MESSAGES, on_text=_sink)
    assert reason in info.value.message
    assert "Error" not in info.value.message


CHILD = """
import json, sys
from vance_cli.llm import LLMConfig, complete
from vance_cli.base.errors import LLMError
config = LLMConfig(base_url=sys.argv[1], api_key=None, model="m", timeout=60, max_retries=0,
                   json_mode="none")
stream = sys.argv[2] == "stream"
try:
    answer = complete(config, [{"role": "user", "content": "hi"}], max_tokens=10**9,
                      on_text=(lambda piece: None) if stream else None)
    out = [len(answer.text), answer.truncated]
except LLMError as exc:
    out = [0, exc.message]
# VmHWM, this process's own peak: ru_maxrss starts at the forking parent's size
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
out.append(int(peak.split()[1]) // 1024)
print(json.dumps(out))
"""


@pytest.mark.parametrize("mode", ["stream", "plain"])
def test_an_endless_body_stays_under_200_mb_of_memory(llm_server: ScriptedLLMServer,
                                                      mode: str) -> None:
    """Each call in a child process of its own; its peak RSS is VmHWM (ru_maxrss counts
    the forking test process's size, which a long test run grows past 200 MB)."""
    llm_server.endless()
    done = subprocess.run([sys.executable, "-c", CHILD, llm_server.url, mode], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)
    length, what, peak_mb = json.loads(done.stdout)
    if mode == "stream":
        assert (length, what) == (1_000_000, "bytes")
    else:
        assert "larger than" in what
    assert peak_mb < RSS_LIMIT_MB, peak_mb
