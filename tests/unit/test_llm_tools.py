"""llm.complete with tools: the calls of a reply, streamed in pieces or whole (docs/tools.md)."""

from __future__ import annotations

import pytest
from llm_server import ScriptedLLMServer

from vance_cli.base.errors import LLMError
from vance_cli.llm import LLMConfig, ToolCall, complete

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {
                                               "path": {"type": "string"}}}}}]
MESSAGES = [{"role": "user", "content": "read a.py and b.py"}]


def config(server: ScriptedLLMServer) -> LLMConfig:
    return LLMConfig(base_url=server.url, api_key=None, model="test-model", timeout=10,
                     max_retries=0, json_mode="none")


@pytest.mark.parametrize("streamed", [True, False])
def test_the_calls_of_a_reply_come_back_whole(llm_server: ScriptedLLMServer,
                                              streamed: bool) -> None:
    llm_server.reply("Reading both.", tool_calls=[("read_file", {"path": "a.py"}),
                                                  ("read_file", '{"path": "b.py"}')])
    pieces: list[str] = []
    answer = complete(config(llm_server), MESSAGES, tools=TOOLS,
                      on_text=pieces.append if streamed else None)
    assert answer.tool_calls == (ToolCall("call_0_read_file", "read_file", '{"path": "a.py"}'),
                                 ToolCall("call_1_read_file", "read_file", '{"path": "b.py"}'))
    assert answer.finish_reason == "tool_calls" and answer.text == "Reading both."
    request = llm_server.chat_requests[0]
    assert request.json["tools"] == TOOLS
    if streamed:
        assert "".join(pieces) == "Reading both."
        assert request.streamed >= 1


def test_a_server_that_refuses_tools_says_so(llm_server: ScriptedLLMServer) -> None:
    llm_server.fail(400, "this model does not support tools")
    with pytest.raises(LLMError) as caught:
        complete(config(llm_server), MESSAGES, tools=TOOLS)
    assert caught.value.details["reason"] == "tools_refused"
    llm_server.fail(400, "this model does not support tools")
    with pytest.raises(LLMError) as plain:
        complete(config(llm_server), MESSAGES)
    assert plain.value.details.get("reason") is None
