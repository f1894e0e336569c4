from __future__ import annotations

import threading
import traceback

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base.config import load_settings
from vance_cli.base.errors import LLMError, LLMNotConfigured
from vance_cli.base.json_mode import reduce_request, resolve_json_mode
from vance_cli.llm import (
    OPENAI_BASE_URL,
    PLACEHOLDER_KEY,
    LLMConfig,
    complete,
    redact,
    safe_endpoint,
)

KEY = "sk-test-9f8e7d6c5b4a39281706"
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
          "additionalProperties": False}


def _config(server: ScriptedLLMServer, **changes: object) -> LLMConfig:
    values: dict[str, object] = {"base_url": server.url, "api_key": KEY, "model": "m",
                                 "timeout": 5.0, "max_retries": 0, "json_mode": "auto"}
    values.update(changes)
    return LLMConfig(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("mode", "url", "expected"), [
    ("auto", "https://api.openai.com/v1", "json_schema"),
    ("auto", "http://localhost:11434/v1", "json_schema"),      # Ollama
    ("auto", "http://127.0.0.1:8000/v1", "json_schema"),       # vLLM
    ("auto", "http://localhost:1234/v1", "json_schema"),       # LM Studio rejects json_object
    ("auto", "http://192.168.1.20:8080/v1", "json_schema"),    # llama.cpp on the LAN
    ("auto", "http://gpu-box.local:8080/v1", "json_schema"),
    ("auto", "https://api.deepseek.com/v1", "json_object"),    # hosted, unknown
    ("auto", "https://openrouter.ai/api/v1", "json_object"),
    ("json_object", "https://api.openai.com/v1", "json_object"),
    ("none", "http://localhost:11434/v1", "none"),
    ("json_schema", "https://example.com/v1", "json_schema"),
])
def test_json_mode_per_endpoint(mode: str, url: str, expected: str) -> None:
    assert resolve_json_mode(mode, url) == expected


def test_safe_endpoint_drops_credentials_and_query() -> None:
    assert safe_endpoint("https://user:pw@host.example:8443/v1/?key=abc#x") == \
        "https://host.example:8443/v1"


def test_redact_replaces_every_occurrence() -> None:
    assert redact(f"a {KEY} b {KEY}", [KEY, None]) == "a [REDACTED] b [REDACTED]"
    assert redact("abc", ["ab"]) == "abc"  # too short to be a secret


def test_config_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LLMNotConfigured):
        LLMConfig.from_settings(load_settings())
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("VANCE_LLM_MODEL", "gpt-x")
    config = LLMConfig.from_settings(load_settings())
    assert (config.base_url, config.model, config.api_key) == (OPENAI_BASE_URL, "gpt-x", KEY)
    assert LLMConfig.from_settings(load_settings(), model="caller-model").model == "caller-model"
    assert KEY not in repr(config)


def test_completion_fields_and_request(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("hello", model="served-model", prompt_tokens=11, completion_tokens=3)
    answer = complete(_config(llm_server), MESSAGES, SCHEMA, max_tokens=77)
    assert (answer.text, answer.finish_reason, answer.model) == ("hello", "stop", "served-model")
    assert (answer.prompt_tokens, answer.completion_tokens) == (11, 3)
    assert answer.json_mode == "json_schema" and answer.latency_ms >= 0
    [request] = llm_server.chat_requests
    body = request.json
    assert body["messages"] == MESSAGES and body["model"] == "m"
    assert body["temperature"] == 0 and body["max_tokens"] == 77
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_keyless_server_gets_placeholder_key(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("ok")
    complete(_config(llm_server, api_key=None, json_mode="json_object"), MESSAGES, SCHEMA)
    [request] = llm_server.chat_requests
    assert request.headers["authorization"] == f"Bearer {PLACEHOLDER_KEY}"
    assert request.json["response_format"] == {"type": "json_object"}


def test_json_mode_none_sends_no_response_format(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("ok")
    complete(_config(llm_server, json_mode="none"), MESSAGES, SCHEMA)
    assert "response_format" not in llm_server.chat_requests[0].json


def test_missing_model_uses_the_servers_only_model(llm_server: ScriptedLLMServer) -> None:
    llm_server.models = ["qwen2.5:7b"]
    llm_server.reply("ok")
    complete(_config(llm_server, model=None), MESSAGES)
    assert llm_server.chat_requests[0].json["model"] == "qwen2.5:7b"


def test_missing_model_with_several_served_is_an_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.models = ["a", "b"]
    with pytest.raises(LLMError, match=r"no model configured .*offers: a, b"):
        complete(_config(llm_server, model=None), MESSAGES)
    assert llm_server.chat_requests == []


def test_auto_mode_steps_down_to_plain_text(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(400, "response_format json_schema is not supported")
    llm_server.fail(400, "response_format json_object is not supported")
    llm_server.reply("plain")
    answer = complete(_config(llm_server), MESSAGES, SCHEMA)
    first, second, third = llm_server.chat_requests
    assert first.json["response_format"]["type"] == "json_schema"
    assert second.json["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "response_format" not in third.json
    assert answer.json_mode == "none" and answer.text == "plain"


def test_explicit_mode_is_never_downgraded(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(400, "response_format json_object is not supported")
    with pytest.raises(LLMError, match="HTTP 400: response_format json_object is not supp"):
        complete(_config(llm_server, json_mode="json_object"), MESSAGES, SCHEMA)
    assert len(llm_server.chat_requests) == 1


def test_rejected_temperature_is_dropped_once(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(400, "Unsupported value: 'temperature' does not support 0")
    llm_server.reply("ok")
    complete(_config(llm_server, json_mode="json_object"), MESSAGES, SCHEMA)
    first, second = llm_server.chat_requests
    assert first.json["temperature"] == 0 and "temperature" not in second.json
    assert second.json["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(("status", "text", "auto", "dropped"), [
    (400, "temperature unsupported", False, "temperature"),
    (422, "unknown field response_format", True, "response_format"),
    (400, "bad request", False, None),
    (500, "temperature", True, None),
])
def test_reduce_request_table(status: int, text: str, auto: bool, dropped: str | None) -> None:
    request = {"model": "m", "temperature": 0, "response_format": {"type": "json_object"}}
    reduced = reduce_request(request, status, text, auto)
    if dropped is None:
        assert reduced is None
    else:
        assert reduced is not None and dropped not in reduced
        assert set(request) - set(reduced) == {dropped}


def test_openai_host_gets_max_completion_tokens() -> None:
    from vance_cli.llm import build_request

    config = LLMConfig(base_url="https://api.openai.com/v1", api_key=KEY, model="m")
    body = build_request(config, "m", MESSAGES, SCHEMA, 50)
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body


def test_server_error_is_retried_then_fails(llm_server: ScriptedLLMServer) -> None:
    for _ in range(3):
        llm_server.fail(500, "overloaded")
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server, max_retries=2), MESSAGES)
    assert len(llm_server.chat_requests) == 3
    assert str(info.value) == f"HTTP 500: overloaded (at {_host(llm_server)})"
    assert not info.value.timeout


def test_auth_error_never_shows_the_key(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(401, f"Incorrect API key provided: {KEY}. Check it.")
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server, max_retries=2), MESSAGES)
    assert len(llm_server.chat_requests) == 1  # 401 is not retried
    text = "".join(traceback.format_exception(info.value))
    assert KEY not in text and KEY not in repr(info.value.details)
    assert "[REDACTED]" in str(info.value) and "HTTP 401" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_timeout_is_flagged_and_bounded(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("late", gate=threading.Event())  # never answered
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server, timeout=0.5), MESSAGES)
    assert info.value.timeout and "timed out after 0.5 s" in str(info.value)
    assert len(llm_server.chat_requests) == 1


def test_timeouts_are_retried_within_the_documented_bound(llm_server: ScriptedLLMServer) -> None:
    never = threading.Event()
    llm_server.reply("late", gate=never)
    llm_server.reply("late", gate=never)
    with pytest.raises(LLMError, match=r"after 0\.5 s per attempt, 2 attempts") as info:
        complete(_config(llm_server, timeout=0.5, max_retries=1), MESSAGES)
    assert info.value.timeout and len(llm_server.chat_requests) == 2  # retries, then gives up


def test_connection_refused_is_an_llm_error() -> None:
    server = ScriptedLLMServer()
    url = server.url
    server.stop()  # nothing listens there any more
    config = LLMConfig(base_url=url, api_key=KEY, model="m", timeout=2, max_retries=0)
    with pytest.raises(LLMError) as info:
        complete(config, MESSAGES)
    assert not info.value.timeout and KEY not in str(info.value)


def test_reply_that_is_not_json_is_an_llm_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.raw(200, b"<html>gateway</html>", content_type="text/html")
    with pytest.raises(LLMError):
        complete(_config(llm_server), MESSAGES)


def test_reply_without_choices_is_an_llm_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.raw(200, b'{"id": "x", "object": "chat.completion", "created": 0, '
                        b'"model": "m", "choices": []}')
    with pytest.raises(LLMError, match="no choices"):
        complete(_config(llm_server), MESSAGES)


def test_key_cut_by_the_length_limit_is_still_redacted(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(403, "x" * 290 + f" {KEY} more text")
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server), MESSAGES)
    assert KEY[:8] not in str(info.value)


def test_unexpected_client_failure_is_redacted(llm_server: ScriptedLLMServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    def explode(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError(f"header Authorization: Bearer {KEY}")

    monkeypatch.setattr(openai.resources.chat.completions.Completions, "create", explode)
    with pytest.raises(LLMError) as info:
        complete(_config(llm_server), MESSAGES)
    assert str(info.value) == ("RuntimeError: header Authorization: Bearer [REDACTED] "
                               f"(at {_host(llm_server)})")
    assert info.value.__suppress_context__


def test_key_echoed_in_a_reply_is_redacted(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(f'Your request had "Authorization: Bearer {KEY}". {{"a": "{KEY}"}}',
                     model=f"proxy-{KEY}")
    answer = complete(_config(llm_server), MESSAGES)
    assert KEY not in answer.text and KEY not in answer.model
    assert answer.text == 'Your request had "Authorization: Bearer [REDACTED]". ' \
        '{"a": "[REDACTED]"}'
    assert answer.model == "proxy-[REDACTED]"


def test_a_short_placeholder_key_never_changes_a_reply(llm_server: ScriptedLLMServer) -> None:
    reply = '{"decision": "MATCH", "recipe": "code-read", "rationale": "read the code"}'
    for key in ("code", "llama", "EMPTY"):
        llm_server.reply(reply, model="llama3")
        answer = complete(_config(llm_server, api_key=key), MESSAGES)
        assert (answer.text, answer.model) == (reply, "llama3")


def _host(server: ScriptedLLMServer) -> str:
    return server.url.split("//", 1)[1].split("/", 1)[0]


# --- streaming ----------------------------------------------------------------------------


def test_a_streamed_reply_comes_in_pieces_in_order(llm_server: ScriptedLLMServer) -> None:
    text = "Lima is the capital of Peru, on the Pacific coast."
    llm_server.reply(text, chunks=5, prompt_tokens=11, completion_tokens=7)
    pieces: list[str] = []
    answer = complete(_config(llm_server), MESSAGES, on_text=pieces.append)
    (request,) = llm_server.chat_requests
    assert request.json["stream"] is True
    assert request.json["stream_options"] == {"include_usage": True}
    assert request.streamed == 5 and len(pieces) > 1
    assert "".join(pieces) == answer.text == text
    assert (answer.finish_reason, answer.prompt_tokens, answer.completion_tokens) == \
        ("stop", 11, 7)


def test_always_answers_every_request_the_queue_leaves_and_queued_replies_go_first(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("queued")
    llm_server.always(lambda req: "echo " + req.json["messages"][-1]["content"], chunks=2)
    answers = [complete(_config(llm_server), [{"role": "user", "content": f"q{i}"}],
                        on_text=lambda _t: None).text for i in range(3)]
    assert answers == ["queued", "echo q1", "echo q2"]
    assert [r.streamed for r in llm_server.chat_requests] == [3, 2, 2]
    llm_server.always("fixed")
    assert complete(_config(llm_server), MESSAGES).text == "fixed"
    assert llm_server.pending == 0


def test_a_stream_that_breaks_is_an_llm_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply("Lima is the capital of Peru.", chunks=5, cut_after=3)
    pieces: list[str] = []
    with pytest.raises(LLMError):  # keyless: nothing is held back for the redactor
        complete(_config(llm_server, api_key=None), MESSAGES, on_text=pieces.append)
    assert pieces and "".join(pieces) != "Lima is the capital of Peru."


def test_what_on_text_raises_ends_the_stream_and_is_raised_as_it_is(
        llm_server: ScriptedLLMServer) -> None:
    class Enough(Exception):
        pass

    def sink(piece: str) -> None:
        raise Enough(piece)

    resume = threading.Event()
    llm_server.reply("one two three four five", chunks=5, holds={2: resume})
    try:
        with pytest.raises(Enough) as info:
            complete(_config(llm_server, api_key=None), MESSAGES, on_text=sink)
    finally:
        resume.set()
    assert str(info.value) == "one "
    llm_server.reply("again")
    assert complete(_config(llm_server), MESSAGES).text == "again"  # the client is usable


def test_a_key_split_over_stream_chunks_never_reaches_on_text(
        llm_server: ScriptedLLMServer) -> None:
    text = f"key={KEY};"  # one word: the server splits it inside the key
    llm_server.reply(text, chunks=9)
    pieces: list[str] = []
    answer = complete(_config(llm_server), MESSAGES, on_text=pieces.append)
    assert llm_server.chat_requests[0].streamed == 9
    assert not any(KEY[:8] in p for p in pieces)
    assert "".join(pieces) == answer.text == "key=[REDACTED];"


SECRET = "sk-abcdefghijklmnop"  # 19 characters
OTHER = "tok-0123456789abcdefXYZ"  # 23 characters


@pytest.mark.parametrize("text", [
    f"a {SECRET} b",
    f"{SECRET}{SECRET}",
    f"sk-abc {SECRET} sk-abcdefghijklmno!",  # prefixes that are no key are kept
    f"{OTHER[:5]}{SECRET}{OTHER}",
    "no key at all, just text",
])
def test_the_stream_redactor_never_lets_a_key_through_wherever_the_chunks_split(
        text: str) -> None:
    from vance_cli.llm import StreamRedactor

    expected = redact(text, [SECRET, OTHER])
    for first in range(len(text) + 1):
        for second in range(first, len(text) + 1):
            out: list[str] = []
            redactor = StreamRedactor([SECRET, OTHER, None, "short"], out.append)
            for piece in (text[:first], text[first:second], text[second:]):
                redactor.feed(piece)
            redactor.flush()
            joined = "".join(out)
            assert joined == expected, (first, second)
            assert all(SECRET not in p and OTHER not in p for p in out)


def test_the_stream_redactor_one_character_at_a_time() -> None:
    from vance_cli.llm import StreamRedactor

    text = f"x{SECRET}y{OTHER}z{SECRET}"
    out: list[str] = []
    redactor = StreamRedactor([SECRET, OTHER], out.append)
    for char in text:
        redactor.feed(char)
    redactor.flush()
    assert "".join(out) == "x[REDACTED]y[REDACTED]z[REDACTED]"


def test_calls_to_one_endpoint_share_one_client_and_keep_their_own_options(
        llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    made: list[str] = []
    seen: set[int] = set()  # a copy (with_options) shares its client's HTTP client
    real = openai.OpenAI

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: object) -> None:
            if id(kwargs.get("http_client")) not in seen:
                seen.add(id(kwargs.get("http_client")))
                made.append(str(kwargs.get("api_key")))
            super().__init__(**kwargs)

    monkeypatch.setattr(openai, "OpenAI", Counting)
    url = llm_server.url.replace("127.0.0.1", "localhost")  # an endpoint no other test kept
    other = "sk-other-0a1b2c3d4e5f6a7b8c9d"
    for key in (KEY, KEY, other, KEY):
        llm_server.reply("hi")
        complete(_config(llm_server, base_url=url, api_key=key, timeout=2.0 + len(made)),
                 MESSAGES)
    assert made == [KEY, other]  # one client per endpoint and key, made once
    sent = [r.headers["authorization"] for r in llm_server.chat_requests]
    assert sent == [f"Bearer {k}" for k in (KEY, KEY, other, KEY)]
    llm_server.reply("late", delay=1.0)
    with pytest.raises(LLMError, match=r"timed out after 0\.2 s"):  # the call's own timeout
        complete(_config(llm_server, base_url=url, timeout=0.2), MESSAGES)
