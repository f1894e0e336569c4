"""A scripted OpenAI-compatible HTTP server for tests: real sockets on 127.0.0.1, no network.

Tests drive vance through the real ``openai`` client against this server,
so request building, timeouts, retries and error handling are exercised for
real. Reusable for any LLM feature (selector, Slartibartfast, batch).

API (``ScriptedLLMServer``; the ``llm_server`` fixture in ``conftest.py``
gives a started one and stops it after the test)::

    llm_server.reply('{"decision": "MATCH", ...}')       # queue a 200 chat completion
    llm_server.reply(text, finish_reason="length")       # … with another finish reason
    llm_server.reply(text, delay=3.0)                    # … answered after 3 s
    llm_server.reply(text, gate=event)                   # … only once the test sets ``event``
    llm_server.reply(text, chunks=5, chunk_delay=0.2)    # a streamed request gets 5 SSE chunks
    llm_server.reply(text, cut_after=2)                  # … and the stream breaks after 2
    llm_server.reply(text, holds={3: event})             # … held after 3 events until set
    llm_server.reply(text, model="m", prompt_tokens=12, completion_tokens=5)
    llm_server.reply(None, tool_calls=[("read_file", {"path": "a.py"})])  # the model calls tools
    llm_server.always(lambda req: "…", delay=0.2)        # answer every chat request the
                                                         # queue leaves unanswered (benches)
    llm_server.fail(500, "overloaded")                   # queue an OpenAI-style error body
    llm_server.fail(401, "bad key", headers={"x-should-retry": "false"})
    llm_server.raw(200, b"not json", content_type="text/plain")  # any status and body
    llm_server.trickle("hello", every=2.0)               # hostile: the whole body, 1 byte / 2 s
    llm_server.keep_alive(every=0.5)                     # hostile: SSE keep-alive lines only
    llm_server.endless()                                 # hostile: a body that never ends
    llm_server.huge(50_000_000)                          # hostile: a 50 MB reply
    llm_server.sse([b"data: not json"])                  # hostile: raw SSE lines as given
    llm_server.url                                       # "http://127.0.0.1:PORT/v1"
    llm_server.env(api_key="sk-…", model="m", timeout=2, max_retries=0)
                                                         # VANCE_LLM_* variables, as a dict
    llm_server.requests                                  # every request, in arrival order
    llm_server.chat_requests                             # only POST …/chat/completions
    req.method, req.path, req.headers (lower-case keys), req.body (bytes), req.json
    req.streamed                                         # text chunks sent (0: not streamed)
    llm_server.models = ["a", "b"]                       # what GET /v1/models lists

Rules:
- Scripted replies are consumed in FIFO order by POST ``/v1/chat/completions``
  only. A request with ``"stream": true`` gets the reply as server-sent
  events, as OpenAI sends them: the text split into ``chunks`` deltas (at
  least 3 when the text allows; ``chunk_delay`` seconds apart), a chunk with
  the finish reason, a usage chunk when ``stream_options.include_usage`` asks
  for it, then ``[DONE]`` — over HTTP/1.1 chunked transfer, so ``cut_after``
  can break the stream mid-body as a dying server does. ``holds={n: event}``
  holds the stream after its first ``n`` events (the role chunk counts)
  until the test sets the event, at as many places as it names: a test
  sees each partial answer for as long as it needs, without timing. An
  empty queue
  answers HTTP 500 ``no scripted reply left`` with ``x-should-retry:
  false``, so an unexpected extra call shows up as a failure, not a hang —
  unless ``always`` gave a reply for every request: then a chat request that
  no queued reply fits gets that one, its text made from the request (for
  benches that send hundreds of requests in an order nobody knows).
- ``tool_calls`` (``[(name, arguments), …]``, arguments a dict or a raw JSON text): the
  reply calls tools (finish reason ``tool_calls``); streamed, each call comes as deltas
  in several chunks — its id and name first, then its arguments in three pieces — as
  OpenAI sends them.
- ``GET /v1/models`` lists ``models`` (default ``["test-model"]``).
- A delayed reply waits on an event that ``stop()`` sets, so stopping never
  waits for a slow reply; a client that gave up meanwhile is ignored.
- Headers are recorded as sent: tests use them to check that the API key
  reaches the endpoint and nothing else.
- Hostile replies (``trickle``, ``keep_alive``, ``endless``, ``huge``, ``sse``)
  are sent over chunked transfer as they are generated, so a body of any
  size costs the server no memory; each one, streamed or not as the request
  asks (``sse`` always as SSE), stops when the client leaves or the server
  stops: none outlives its test.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ScriptedReply:
    """One queued answer: status, body and headers, sent after ``delay`` seconds."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    gate: threading.Event | None = None
    """When set, the reply is sent only once the test sets this event (or the server stops)."""
    text: str | None = None
    """For a chat completion: the message text (a streamed request gets it in chunks)."""
    finish_reason: str | None = "stop"
    model: str = "test-model"
    prompt_tokens: int = 100
    completion_tokens: int = 20
    chunks: int = 4
    chunk_delay: float = 0.0
    cut_after: int | None = None
    holds: dict[int, threading.Event] = field(default_factory=dict)
    parts: Callable[[bool], Iterator[bytes]] | None = None
    """A hostile reply: its raw body pieces (given whether the request streams), sent as made."""
    pace: float = 0.0
    """Seconds before each piece of ``parts``."""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    """The tools the reply calls: ``(name, arguments as JSON text)``."""
    when: Callable[[RecordedRequest], bool] | None = None
    """Only a request this accepts gets the reply (None: any); the queue stays first in,
    first out among the replies that fit, so callers racing each other get their own."""


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    streamed: int = 0
    """Chunks with text this request got as server-sent events (0: not streamed)."""

    @property
    def json(self) -> Any:
        """The body parsed as JSON (None when empty or not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


def _wants_stream(req: RecordedRequest) -> bool:
    data = req.json
    return isinstance(data, dict) and data.get("stream") is True


def split_text(text: str, parts: int) -> list[str]:
    """Split ``text`` into about ``parts`` pieces at word boundaries (no piece lost)."""
    words = re.findall(r"\S+\s*|\s+", text)
    if len(words) < parts:
        words = list(text)
    size = max(1, -(-len(words) // max(parts, 1)))
    return ["".join(words[i:i + size]) for i in range(0, len(words), size)] or [""]


def sse_events(reply: ScriptedReply, req: RecordedRequest) -> list[str]:
    """Return the ``data:`` payloads of a streamed completion, ``[DONE]`` last."""
    base = {"id": "chatcmpl-test", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": reply.model}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None}]}]
    for piece in split_text(reply.text or "", reply.chunks) \
            if reply.text or not reply.tool_calls else ():
        events.append({**base, "choices": [{"index": 0, "delta": {"content": piece},
                                            "finish_reason": None}]})
    for index, (name, arguments) in enumerate(reply.tool_calls):
        head = {"index": index, "id": f"call_{index}_{name}", "type": "function",
                "function": {"name": name, "arguments": ""}}
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [head]},
                                            "finish_reason": None}]})
        for piece in _thirds(arguments):
            events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": index, "function": {"arguments": piece}}]}, "finish_reason": None}]})
    events.append({**base, "choices": [{"index": 0, "delta": {},
                                        "finish_reason": reply.finish_reason}]})
    options = (req.json or {}).get("stream_options") or {}
    if options.get("include_usage"):
        events.append({**base, "choices": [], "usage": {
            "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens}})
    return [json.dumps(e) for e in events] + ["[DONE]"]


def _thirds(text: str) -> list[str]:
    """Split ``text`` into three pieces (some may be empty when it is short)."""
    size = max(1, -(-len(text) // 3))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
            "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _plain_events(text: str) -> list[str]:
    """The ``data:`` payloads of a complete streamed reply holding ``text`` (no usage)."""
    return [json.dumps(_chunk({"role": "assistant", "content": text})),
            json.dumps(_chunk({}, "stop")), "[DONE]"]


def _has_text(event: str) -> bool:
    """True when a ``data:`` payload carries a piece of the reply's text."""
    if event == "[DONE]":
        return False
    return any(c.get("delta", {}).get("content") for c in json.loads(event)["choices"])


def completion_body(text: str | None, finish_reason: str | None = "stop",
                    model: str = "test-model", prompt_tokens: int = 100,
                    completion_tokens: int = 20,
                    tool_calls: list[tuple[str, str]] | None = None) -> bytes:
    """Return an OpenAI chat completion JSON body holding ``text`` (and ``tool_calls``)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [{"id": f"call_{i}_{name}", "type": "function",
                                  "function": {"name": name, "arguments": arguments}}
                                 for i, (name, arguments) in enumerate(tool_calls)]
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": message}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }).encode()


POLL = 0.01
"""Seconds between the server loop's looks for ``stop()``."""


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 that answers from a queue (see module doc)."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.models: list[str] = ["test-model"]
        self._queue: deque[ScriptedReply] = deque()
        self._always: Callable[[RecordedRequest], ScriptedReply] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # serve_forever looks for stop() every poll interval: 10 ms, so a test's teardown
        # waits about 5 ms for it, not 25 (hundreds of tests start a server)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(POLL,),
                                        daemon=True)

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> ScriptedLLMServer:
        """Start serving in a background thread; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; delayed replies are abandoned at once."""
        self._stopping.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        """The base URL to configure, ending in ``/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def env(self, api_key: str | None = None, model: str | None = "test-model",
            timeout: float | None = 10, max_retries: int | None = 0,
            json_mode: str | None = None, combine: str | None = "llm") -> dict[str, str]:
        """Return ``VANCE_LLM_*`` environment variables pointing vance at this server.

        ``combine`` is ``selector.combine``: ``llm`` by default, so the scripted reply is the
        selector's decision whatever the offline selector would say; None leaves the
        setting's default (``offline-first``), for tests of how the two combine.
        """
        values = {"VANCE_SELECTOR_COMBINE": combine,
                  "VANCE_LLM_BASE_URL": self.url, "VANCE_LLM_API_KEY": api_key,
                  "VANCE_LLM_MODEL": model,
                  "VANCE_LLM_TIMEOUT": None if timeout is None else str(timeout),
                  "VANCE_LLM_MAX_RETRIES": None if max_retries is None else str(max_retries),
                  "VANCE_LLM_JSON_MODE": json_mode}
        return {k: v for k, v in values.items() if v is not None}

    # -- scripting -------------------------------------------------------------
    def reply(self, text: str | None, finish_reason: str | None = "stop", delay: float = 0.0,
              model: str = "test-model", prompt_tokens: int = 100,
              completion_tokens: int = 20, gate: threading.Event | None = None,
              chunks: int = 4, chunk_delay: float = 0.0, cut_after: int | None = None,
              holds: dict[int, threading.Event] | None = None,
              tool_calls: list[tuple[str, Any]] | None = None,
              when: Callable[[RecordedRequest], bool] | None = None) -> None:
        """Queue a 200 chat completion whose message content is ``text``.

        ``tool_calls``: ``[(name, arguments)]`` the reply calls (arguments a dict, or a
        text sent as it is); the finish reason becomes ``tool_calls``.

        ``gate``: the reply waits until the test sets it, so a test can prove a
        caller did not wait for it (the caller returned while the gate was shut).
        ``chunks``, ``chunk_delay``, ``cut_after`` and ``holds``: how a streamed request
        gets it (see the module docstring). ``when``: only a request it accepts gets the
        reply (for processes whose calls race each other).
        """
        calls = [(name, args if isinstance(args, str) else json.dumps(args))
                 for name, args in tool_calls or ()]
        if calls and finish_reason == "stop":
            finish_reason = "tool_calls"
        body = completion_body(text, finish_reason, model, prompt_tokens, completion_tokens,
                               calls)
        self._push(ScriptedReply(200, body, delay=delay, gate=gate, text=text or "",
                                 finish_reason=finish_reason, model=model,
                                 prompt_tokens=prompt_tokens,
                                 completion_tokens=completion_tokens, chunks=chunks,
                                 chunk_delay=chunk_delay, cut_after=cut_after,
                                 holds=dict(holds or {}), tool_calls=calls, when=when))

    def always(self, text: str | Callable[[RecordedRequest], str], delay: float = 0.0,
               chunks: int = 4, chunk_delay: float = 0.0) -> None:
        """Answer every chat request that no queued reply fits with a 200 completion.

        ``text``: the message content, or a function of the request that makes it (so each
        caller can get an answer of its own). ``delay``, ``chunks``, ``chunk_delay``: as for
        ``reply``. Replaces an earlier ``always``.
        """
        def make(req: RecordedRequest) -> ScriptedReply:
            content = text(req) if callable(text) else text
            return ScriptedReply(200, completion_body(content), delay=delay, text=content,
                                 chunks=chunks, chunk_delay=chunk_delay)

        with self._lock:
            self._always = make

    def fail(self, status: int, message: str = "error", delay: float = 0.0,
             headers: dict[str, str] | None = None) -> None:
        """Queue an HTTP error with an OpenAI-style body ``{"error": {"message": …}}``."""
        body = json.dumps({"error": {"message": message, "type": "test_error",
                                     "code": str(status)}}).encode()
        self._push(ScriptedReply(status, body, headers=dict(headers or {}), delay=delay))

    def raw(self, status: int, body: bytes, content_type: str = "application/json",
            delay: float = 0.0, headers: dict[str, str] | None = None) -> None:
        """Queue any status and body, sent as they are."""
        self._push(ScriptedReply(status, body, content_type, dict(headers or {}), delay))

    def trickle(self, text: str, every: float = 2.0) -> None:
        """Queue a complete reply holding ``text``, sent one byte every ``every`` seconds."""
        def parts(streamed: bool) -> Iterator[bytes]:
            body = (b"".join(f"data: {e}\n\n".encode() for e in _plain_events(text))
                    if streamed else completion_body(text))
            for index in range(len(body)):
                yield body[index:index + 1]

        self._push(ScriptedReply(200, b"", parts=parts, pace=every))

    def keep_alive(self, every: float = 0.5) -> None:
        """Queue a reply that sends only SSE keep-alive comments, every ``every`` seconds."""
        def parts(streamed: bool) -> Iterator[bytes]:
            while True:
                yield b": keep-alive\n\n" if streamed else b" "

        self._push(ScriptedReply(200, b"", parts=parts, pace=every))

    def endless(self, piece: str = "x" * 1024) -> None:
        """Queue a reply whose body never ends: text chunks without a finish, or a JSON string."""
        def parts(streamed: bool) -> Iterator[bytes]:
            if not streamed:
                yield b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m",'
                yield b' "choices": [{"index": 0, "message": {"role": "assistant", "content": "'
            event = f"data: {json.dumps(_chunk({'content': piece}))}\n\n".encode()
            while True:
                yield event if streamed else piece.encode()

        self._push(ScriptedReply(200, b"", parts=parts))

    def huge(self, size: int, piece: str = "y" * 1000) -> None:
        """Queue a complete reply of ``size`` bytes of text, made as it is sent."""
        def parts(streamed: bool) -> Iterator[bytes]:
            count = max(1, size // len(piece))
            if not streamed:
                head, tail = completion_body("@").split(b"@")
                yield head
                for _ in range(count):
                    yield piece.encode()
                yield tail
                return
            event = f"data: {json.dumps(_chunk({'content': piece}))}\n\n".encode()
            for _ in range(count):
                yield event
            yield f"data: {json.dumps(_chunk({}, 'stop'))}\n\ndata: [DONE]\n\n".encode()

        self._push(ScriptedReply(200, b"", parts=parts))

    def sse(self, lines: list[bytes]) -> None:
        """Queue an SSE reply of these raw lines (each followed by a blank line), as they are."""
        def parts(streamed: bool) -> Iterator[bytes]:
            for line in lines:
                yield line + b"\n\n"

        self._push(ScriptedReply(200, b"", content_type="text/event-stream", parts=parts))

    def _push(self, reply: ScriptedReply) -> None:
        with self._lock:
            self._queue.append(reply)

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Recorded POST requests to ``…/chat/completions``."""
        return [r for r in self.requests
                if r.method == "POST" and r.path.rstrip("/").endswith("/chat/completions")]

    # -- serving ---------------------------------------------------------------
    def _next(self, req: RecordedRequest) -> ScriptedReply:
        with self._lock:
            self.requests.append(req)
            if req.method == "GET" and req.path.rstrip("/").endswith("/models"):
                data = {"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                    "owned_by": "test"} for m in self.models]}
                return ScriptedReply(200, json.dumps(data).encode())
            is_chat = req.method == "POST" and req.path.rstrip("/").endswith("/chat/completions")
            if is_chat:
                for reply in self._queue:
                    if reply.when is None or reply.when(req):
                        self._queue.remove(reply)
                        return reply
                if self._always is not None:
                    return self._always(req)
        return ScriptedReply(500, b'{"error": {"message": "no scripted reply left"}}',
                             headers={"x-should-retry": "false"})

    def _pace(self, reply: ScriptedReply, index: int) -> bool:
        """Wait before a stream's event ``index`` as scripted; False when the server stops."""
        if index and reply.chunk_delay and self._stopping.wait(reply.chunk_delay):
            return False
        hold = reply.holds.get(index)
        if hold is not None:
            while not hold.wait(0.05):
                if self._stopping.is_set():
                    return False
        return True

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                req = RecordedRequest(self.command, self.path,
                                      {k.lower(): v for k, v in self.headers.items()},
                                      body, time.monotonic())
                reply = server._next(req)
                if reply.delay and server._stopping.wait(reply.delay):
                    return
                while reply.gate is not None and not reply.gate.wait(0.05):
                    if server._stopping.is_set():
                        return
                if reply.parts is not None:
                    _send_hostile(self, server._stopping, reply, req)
                    return
                if reply.text is not None and reply.status == 200 and _wants_stream(req):
                    self._stream(reply, req)
                    return
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    self.send_header("content-length", str(len(reply.body)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def _stream(self, reply: ScriptedReply, req: RecordedRequest) -> None:
                self.protocol_version = "HTTP/1.1"
                self.close_connection = True
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for index, event in enumerate(sse_events(reply, req)):
                        if reply.cut_after is not None and index >= reply.cut_after:
                            self.wfile.flush()
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        if not server._pace(reply, index):
                            return
                        data = f"data: {event}\n\n".encode()
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                        req.streamed += _has_text(event)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client left (Ctrl-C, a timeout)

            do_GET = do_POST = _serve

        return Handler


def _send_hostile(handler: BaseHTTPRequestHandler, stopping: threading.Event,
                  reply: ScriptedReply, req: RecordedRequest) -> None:
    """Send a hostile reply's pieces over chunked transfer until they end or the client leaves."""
    assert reply.parts is not None
    streamed = _wants_stream(req) or reply.content_type == "text/event-stream"
    handler.protocol_version = "HTTP/1.1"
    handler.close_connection = True
    try:
        handler.send_response(reply.status)
        handler.send_header("content-type", "text/event-stream" if streamed
                            else "application/json")
        handler.send_header("transfer-encoding", "chunked")
        handler.send_header("connection", "close")
        handler.end_headers()
        for data in reply.parts(streamed):
            if stopping.wait(reply.pace) if reply.pace else stopping.is_set():
                return
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass  # the client left: its deadline or its cap
