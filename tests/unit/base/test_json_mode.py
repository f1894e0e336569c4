"""The structured-output ladder: json_schema -> json_object with the schema -> plain text."""

from __future__ import annotations

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base import json_mode
from vance_cli.base.errors import LLMError
from vance_cli.llm import LLMConfig, complete

MESSAGES = [{"role": "user", "content": "pick"}]
SCHEMA = {"type": "object", "properties": {"recipe": {"enum": ["a", "b"]}},
          "required": ["recipe"]}
LLAMA_CPP_500 = ("1 validation error: {'type': 'literal_error', 'loc': ('body', "
                 "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}")
"""What llama-cpp-python's server answers to a ``json_schema`` response_format (HTTP 500)."""


def _config(server: ScriptedLLMServer, mode: str = "auto") -> LLMConfig:
    return LLMConfig(base_url=server.url, api_key=None, model="m", timeout=5.0, max_retries=0,
                     json_mode=mode)


def test_a_500_naming_response_format_steps_down_and_is_remembered(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(500, LLAMA_CPP_500)
    llm_server.reply('{"recipe": "a"}')
    llm_server.reply('{"recipe": "b"}')
    first = complete(_config(llm_server), MESSAGES, SCHEMA)
    second = complete(_config(llm_server), MESSAGES, SCHEMA)
    sent = [r.json.get("response_format") for r in llm_server.chat_requests]
    assert sent[0]["type"] == "json_schema"
    assert sent[1:] == [{"type": "json_object", "schema": SCHEMA}] * 2  # no second refusal
    assert (first.json_mode, second.json_mode) == ("json_object_schema", "json_object_schema")
    assert json_mode.resolve_json_mode("auto", llm_server.url) == "json_object_schema"


def test_a_500_about_something_else_is_an_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(500, "model crashed")
    with pytest.raises(LLMError, match="HTTP 500: model crashed"):
        complete(_config(llm_server), MESSAGES, SCHEMA)
    assert len(llm_server.chat_requests) == 1
    assert json_mode.resolve_json_mode("auto", llm_server.url) == "json_schema"


def test_an_explicit_mode_never_steps_down(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(500, LLAMA_CPP_500)
    with pytest.raises(LLMError, match="HTTP 500"):
        complete(_config(llm_server, "json_schema"), MESSAGES, SCHEMA)
    assert len(llm_server.chat_requests) == 1


def test_the_local_model_mode_sends_the_schema_as_json_object(
        llm_server: ScriptedLLMServer) -> None:
    llm_server.reply('{"recipe": "a"}')
    complete(_config(llm_server, "json_object_schema"), MESSAGES, SCHEMA)
    assert llm_server.chat_requests[0].json["response_format"] == {"type": "json_object",
                                                                   "schema": SCHEMA}


@pytest.mark.parametrize(("sent", "status", "text", "then"), [
    ({"type": "json_schema", "json_schema": {}}, 500, LLAMA_CPP_500,
     {"type": "json_object", "schema": SCHEMA}),
    ({"type": "json_schema", "json_schema": {}}, 422, "unprocessable",
     {"type": "json_object", "schema": SCHEMA}),
    ({"type": "json_object", "schema": SCHEMA}, 400, "response_format.schema unknown", None),
    ({"type": "json_object"}, 400, "json_object unsupported", None),
    ({"type": "json_schema", "json_schema": {}}, 500, "out of memory", "unchanged"),
    ({"type": "json_schema", "json_schema": {}}, 503, "response_format busy", "unchanged"),
    ({"type": "json_schema", "json_schema": {}}, 400,
     "Requested tokens (3310) exceed context window of 2048", "unchanged"),
])
def test_ladder_table(sent: dict[str, object], status: int, text: str, then: object) -> None:
    reduced = json_mode.reduce_request({"model": "m", "response_format": sent}, status, text,
                                       auto=True, schema=SCHEMA)
    if then == "unchanged":
        assert reduced is None
    else:
        assert reduced is not None and reduced.get("response_format") == then
