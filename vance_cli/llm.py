"""OpenAI-compatible chat completions: one bounded, redacted call.

Rules (docs/configuration.md):
- Any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, llama.cpp
  server) through the ``openai`` package. ``openai`` costs about 0.6 s to
  import, so it is imported inside ``complete()`` only: commands that never
  call an LLM never load it.
- Every request has an explicit timeout (``llm.timeout`` seconds per attempt;
  the client's own default is 10 minutes) and at most ``llm.max_retries``
  retries (connection errors, timeouts, 408/409/429/5xx, with the client's
  exponential backoff of 0.5 s doubling up to 8 s, or a server's
  ``Retry-After`` of at most 120 s). Worst case for one call:
  ``(max_retries + 1) * timeout`` plus the backoff sleeps.
- Keyless local servers get a placeholder key, because the client refuses
  to start without one.
- One client per endpoint and key is made once and kept (``_client``):
  making one costs tens of milliseconds (its TLS context reads the CA
  bundle), more than a short streamed reply of a local model. Each call
  uses a copy with its own timeout and retries, which shares the
  client's connections; the copy for a timeout and a retry count is kept
  too (``_configured``: the turns of a process ask for the same ones).
  Nothing closes a kept client but the exit.
- Every failure is an ``LLMError`` (``timeout`` set when the last attempt
  timed out). Its message never contains the API key: the key is redacted
  from any text that came from the client or the server, and the original
  exception is never chained (``from None``), so no traceback shows it.
- A successful reply's text and model name have the key redacted too (a
  server may echo it), so no caller ever holds it in a reply — but only a
  key long enough to be a real secret (``REPLY_SECRET_MIN``): placeholder
  keys of local servers (``ollama``, ``EMPTY``, ``code``) are ordinary words
  that a reply must keep (a recipe ``code-read`` must stay ``code-read``).
- ``llm.json_mode`` picks the structured-output request: ``json_schema``
  (a strict schema), ``json_object`` (any JSON object) or ``none``;
  ``auto`` chooses per endpoint and steps down after a refusal, keeping the
  rung that worked per endpoint (``base.json_mode``).
- Streaming (``on_text``): the reply arrives as server-sent events; each
  piece of text goes to ``on_text`` as it comes, with the key held back
  until it cannot be part of a key any more (``StreamRedactor``). The
  timeout applies between two pieces; a stream that breaks or ends without
  a finish reason is an ``LLMError``. An exception that ``on_text`` raises
  is the caller's (a budget, a stop): it closes the stream and is raised as
  it is. Servers that refuse ``stream_options`` get the request once more
  without it.
- Tool calling (``tools``): the OpenAI tools API. A streamed reply's
  ``tool_calls`` arrive as deltas, assembled by index (id and name once, the
  arguments in pieces); the calls come back as ``Completion.tool_calls``. A
  server that refuses the ``tools`` key fails with an ``LLMError`` whose
  ``reason`` is ``tools_refused`` (the tool loop then asks for JSON actions).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from vance_cli.base.errors import LLMError, LLMNotConfigured
from vance_cli.base.json_mode import (
    MAX_REDUCTIONS,
    json_mode_hint,
    mode_of,
    reduce_request,
    remember,
    resolve_json_mode,
    response_format,
)
from vance_cli.base.records import frozen
from vance_cli.base.text_input import scrub_surrogates

if TYPE_CHECKING:
    from vance_cli.base.config import Settings

OPENAI_BASE_URL = "https://api.openai.com/v1"
"""Endpoint used when a key is configured but no base URL (OpenAI itself)."""

PLACEHOLDER_KEY = "no-key-needed"
"""Sent as the key to keyless local servers (Ollama, vLLM, llama.cpp, LM Studio ignore it)."""

REDACTED = "[REDACTED]"
"""What a secret is replaced with in messages."""

DEFAULT_MAX_TOKENS = 4096
"""Cap on a reply's length, in tokens: room for a reasoning model's ``<think>`` block;
a reply cut off there is ``truncated`` (docs/delegate.md)."""

LOCAL_JSON_MODE = "json_object_schema"
"""``llm.json_mode`` ``auto`` for the local model server: llama-cpp-python's server refuses
``json_schema`` (HTTP 500, "Input should be 'text' or 'json_object'") but takes
``{"type": "json_object", "schema": …}`` and turns the schema into a grammar."""

MAX_ERROR_TEXT = 300
"""Longest server error text kept in a message, in characters."""

DEFAULT_MAX_REPLY_BYTES = 1_000_000
"""Cap on a reply's text, in UTF-8 bytes (``llm.max_reply_bytes``): past it a streamed reply
is cut and kept as ``truncated`` (docs/configuration.md "Deadlines and caps")."""

RAW_BODY_FACTOR = 16
"""A reply's raw body may be this many times ``max_reply_bytes`` (a streamed reply wraps
each token in ~150 bytes of JSON); past it the read stops, so memory stays bounded."""


@frozen
class LLMConfig:
    """Where and how to call the LLM.

    Attributes:
        base_url: the endpoint's ``…/v1`` URL.
        api_key: the key, or None for keyless local servers (never printed).
        model: model name; None asks the server's ``/v1/models`` for its only model.
        timeout: seconds per attempt.
        max_retries: retries after the first attempt.
        json_mode: ``auto``, ``json_schema``, ``json_object`` or ``none``.
        max_reply_bytes: cap on a reply's text, UTF-8 bytes.
    """

    base_url: str
    api_key: str | None = field(repr=False)
    model: str | None
    timeout: float = 30.0
    max_retries: int = 2
    json_mode: str = "auto"
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None = None) -> LLMConfig:
        """Build the config from settings; ``model`` (a caller's preference) beats ``llm.model``.

        With ``llm.local_model`` set and no ``llm.base_url``, the endpoint is the local
        model server, started here when none is running (``local_model.ensure_server``).

        Raises:
            LLMNotConfigured: neither ``llm.base_url``, ``llm.api_key`` nor
                ``llm.local_model`` is set.
            LocalModelError: the local model server cannot be started.
        """
        if not settings.llm_configured:
            raise LLMNotConfigured("no LLM configured (set llm.base_url or llm.api_key)")
        if settings.llm_local:  # docs/configuration.md#local-models: started on demand
            from vance_cli import local_model  # deferred: only with llm.local_model

            server = local_model.ensure_server(settings)
            return cls(base_url=server.base_url, api_key=None,
                       model=model or settings.llm_model or server.alias,
                       timeout=settings.llm_timeout, max_retries=settings.llm_max_retries,
                       json_mode=LOCAL_JSON_MODE if settings.llm_json_mode == "auto"
                       else settings.llm_json_mode,
                       max_reply_bytes=settings.llm_max_reply_bytes)
        return cls(
            base_url=(settings.llm_base_url or OPENAI_BASE_URL).rstrip("/"),
            api_key=settings.llm_api_key or None,
            model=model or settings.llm_model or None,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            json_mode=settings.llm_json_mode,
            max_reply_bytes=settings.llm_max_reply_bytes,
        )

    @property
    def host(self) -> str:
        """The endpoint's host and port, as messages name it (``localhost:11434``)."""
        parts = urlsplit(self.base_url)
        return (parts.hostname or "?") + (f":{parts.port}" if parts.port else "")

    @property
    def endpoint(self) -> str:
        """The base URL without credentials or query (safe to log and print)."""
        return safe_endpoint(self.base_url)


@frozen
class ToolCall:
    """One tool call of a reply, as the model sent it.

    Attributes:
        id: the call's id (the tool result names it).
        name: the tool's name.
        arguments: the arguments, a JSON text (unchecked: the model wrote it).
    """

    id: str
    name: str
    arguments: str


@frozen
class Completion:
    """One chat completion.

    Attributes:
        text: the assistant message content ("" when the server sent none).
        finish_reason: ``stop``, ``length`` … as the server said (None when absent).
        model: the model that answered (as the server reports it).
        prompt_tokens: input tokens, when reported.
        completion_tokens: output tokens, when reported.
        latency_ms: wall time of the whole call including retries, milliseconds.
        json_mode: the structured-output mode actually sent.
        truncated: why the client cut the reply (``bytes``, ``tokens``), or None; a cut
            reply's ``finish_reason`` is ``length``.
        tool_calls: the tools the model called (a request with ``tools`` only).
    """

    text: str
    finish_reason: str | None
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    json_mode: str
    truncated: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@functools.lru_cache(maxsize=32)  # a handful of endpoints; recorded with every LLM call
def safe_endpoint(url: str) -> str:
    """Return ``url`` without user info, query or fragment (what logs may show)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}".rstrip("/")


REPLY_SECRET_MIN = 16
"""Shortest key redacted from a successful reply's text: real API keys are
longer (OpenAI ``sk-…`` 40+), placeholder keys of local servers shorter."""


def redact(text: str, secrets: Sequence[str | None], min_length: int = 4) -> str:
    """Replace every occurrence of each secret with ``[REDACTED]``.

    Args:
        text: any text that came from the client or the server.
        secrets: the values to hide (None entries are skipped).
        min_length: secrets shorter than this are left alone (4 for error
            messages; ``REPLY_SECRET_MIN`` for reply text that gets parsed).
    """
    for secret in secrets:
        if secret and len(secret) >= min_length:
            text = text.replace(secret, REDACTED)
    return text


TextSink = Callable[[str], None]
"""Receives each piece of a streamed reply's text, in order."""


def complete(config: LLMConfig, messages: Sequence[Mapping[str, Any]],
             schema: Mapping[str, Any] | None = None,
             max_tokens: int = DEFAULT_MAX_TOKENS, *, temperature: float | None = 0.0,
             on_text: TextSink | None = None, deadline: float | None = None,
             tools: Sequence[Mapping[str, Any]] | None = None) -> Completion:
    """Send one chat completion request and return the answer.

    Args:
        config: endpoint, key, model, timeout, retries, JSON mode.
        messages: ``[{"role": "system"|"user"|"assistant", "content": …}, …]``.
        schema: JSON schema of the expected object (used in ``json_schema`` mode).
        max_tokens: cap on the answer length, in tokens.
        temperature: sampling temperature (0 for repeatable decisions); None
            sends none (the server's default).
        on_text: stream the reply: called with each piece of text as it arrives; what
            it raises ends the call and is raised as it is.
        deadline: ``time.monotonic()`` by which the whole call must end (a turn's end),
            or None: each attempt still ends ``config.timeout`` seconds after it was sent.
        tools: tool definitions (OpenAI tools API); the reply's calls are
            ``Completion.tool_calls``.

    Returns:
        The Completion (its ``finish_reason`` may be ``length``: the caller decides).

    Raises:
        LLMError: network error, HTTP error status, timeout (``timeout=True``),
            a broken stream, or a reply without choices; the message never holds the key
            and ends with the endpoint's host (``… (at localhost:11434)``).
        KeyboardInterrupt: Ctrl-C while waiting (the stream is closed first).
    """
    try:
        return _complete(config, messages, schema, max_tokens, temperature, on_text, deadline,
                         tools)
    except LLMError as exc:
        raise LLMError(f"{exc.message} (at {config.host})",
                       **{"timeout": exc.timeout, **exc.details}) from None


def _complete(config: LLMConfig, messages: Sequence[Mapping[str, Any]],
              schema: Mapping[str, Any] | None, max_tokens: int, temperature: float | None,
              on_text: TextSink | None, deadline: float | None,
              tools: Sequence[Mapping[str, Any]] | None = None) -> Completion:

    started = time.monotonic()
    try:
        import openai

        from vance_cli import llm_guard  # heavy: imports openai and its HTTP library
    except ImportError as exc:  # pragma: no cover - openai is a dependency
        raise LLMError(f"the openai package cannot be imported: {exc}") from None
    secrets = (config.api_key,)
    timeout = config.timeout if deadline is None else max(
        0.05, min(config.timeout, deadline - started))
    client = _configured(config.base_url, config.api_key or PLACEHOLDER_KEY, timeout,
                         config.max_retries)
    guard = llm_guard.CallGuard(config.timeout, deadline,
                                RAW_BODY_FACTOR * config.max_reply_bytes)
    request: dict[str, Any] = {}
    try:
        with guard:
            model = config.model or _only_model(client, secrets)
            request = build_request(config, model, messages, schema, max_tokens, temperature)
            if tools:
                request["tools"] = [dict(t) for t in tools]
            if on_text is not None:
                request.update(stream=True, stream_options={"include_usage": True})
            reply, request = _create(client, request, config, schema)
            if on_text is not None:
                return _read_stream(reply, model, mode_of(request), started, secrets,
                                    _CallerRaised.wrap(on_text),
                                    _Caps(max_tokens, config.max_reply_bytes))
    except LLMError:
        raise
    except _CallerRaised as exc:
        raise exc.error from None
    except llm_guard.GuardTripped as exc:
        raise LLMError(_tripped(exc.which, config.timeout, deadline, started, guard.attempts),
                       timeout=True, reason="deadline") from None
    except llm_guard.ReplyTooLarge as exc:
        raise LLMError(f"the reply is larger than {exc.limit} bytes (llm.max_reply_bytes"
                       f" x {RAW_BODY_FACTOR}); it was not read further",
                       reason="reply_too_large") from None
    except openai.APITimeoutError:
        attempts = max(1, guard.attempts)
        raise LLMError(f"timed out after {timeout:g} s"
                       + (f" per attempt, {attempts} attempts" if attempts > 1 else ""),
                       timeout=True) from None
    except openai.APIStatusError as exc:
        message = describe_status_error(exc, secrets)
        if tools and tools_refused(exc.status_code, message):
            raise LLMError(message, status=exc.status_code, reason="tools_refused") from None
        hint = json_mode_hint(exc.status_code, message, mode_of(request))
        raise LLMError(message + (f" — {hint}" if hint else ""),
                       status=exc.status_code) from None
    except Exception as exc:  # anything else from the client stack: one line, redacted
        raise LLMError(redact(malformed_reason(exc), secrets)) from None
    return _completion(reply, model, mode_of(request), started, secrets,
                       config.max_reply_bytes)


def tools_refused(status: int, message: str) -> bool:
    """True when an error status says the server takes no tools (400/422/500/501 naming them)."""
    return status in (400, 404, 422, 500, 501) and "tool" in message.lower()


def _tripped(which: str, timeout: float, deadline: float | None, started: float,
             attempts: int) -> str:
    """Say which wall-clock deadline ended a call, and after how many attempts."""
    if which == "call" and deadline is not None:
        text = f"no complete reply within the {deadline - started:.3g} s left to the turn"
    else:
        text = f"timed out after {timeout:g} s (wall clock: the reply did not finish)"
    return text + (f", {attempts} attempts" if attempts > 1 else "")


def malformed_reason(exc: BaseException) -> str:
    """Return the one-line reason for a reply the client could not read (no raw traceback text).

    Args:
        exc: what the client stack raised past its own error types.
    """
    import openai

    if isinstance(exc, UnicodeDecodeError):
        return "the server's reply is not valid UTF-8"
    if isinstance(exc, ValueError) and type(exc).__name__ == "JSONDecodeError":
        return "the server's reply is not valid JSON"
    if isinstance(exc, openai.OpenAIError):
        return _one_line(str(exc)) or type(exc).__name__
    if isinstance(exc, TypeError | AttributeError | KeyError | IndexError):
        return "the server's reply is malformed (not an OpenAI chat completion)"
    return f"{type(exc).__name__}: {_one_line(str(exc))}"


def _create(client: Any, request: dict[str, Any], config: LLMConfig,
            schema: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    """Send ``request``, then smaller ones after refusals; return the reply and what was sent.

    Raises:
        openai.APIStatusError: the last refusal, when no smaller request is left.
    """
    import openai

    create: Any = client.chat.completions.create  # kwargs are built at run time
    first = mode_of(request)
    for _ in range(MAX_REDUCTIONS):
        try:
            reply = create(**request)
            break
        except openai.APIStatusError as exc:
            reduced = reduce_request(request, exc.status_code, _status_text(exc),
                                     auto=config.json_mode == "auto", schema=schema)
            if reduced is None:
                raise
            request = reduced
    else:
        reply = create(**request)
    if mode_of(request) != first:
        remember(config.base_url, mode_of(request))
    return reply, request


CLIENTS_KEPT = 8
"""Clients kept for reuse (one per endpoint and key); a test run meets many endpoints."""


@functools.lru_cache(maxsize=CLIENTS_KEPT)
def _client(base_url: str, api_key: str) -> Any:
    """Return the kept ``openai.OpenAI`` client of an endpoint and key (made on first use)."""
    import openai

    from vance_cli.llm_guard import GuardedHttpClient  # heavy: openai

    return openai.OpenAI(api_key=api_key, base_url=base_url, http_client=GuardedHttpClient())


@functools.lru_cache(maxsize=4 * CLIENTS_KEPT)
def _configured(base_url: str, api_key: str, timeout: float, max_retries: int) -> Any:
    """Return the kept client of an endpoint and key with this timeout and retry count."""
    return _client(base_url, api_key).with_options(timeout=timeout, max_retries=max_retries)


def build_request(config: LLMConfig, model: str, messages: Sequence[Mapping[str, Any]],
                  schema: Mapping[str, Any] | None, max_tokens: int,
                  temperature: float | None = 0.0) -> dict[str, Any]:
    """Return the chat completion request body (without the key).

    Temperature 0 by default, for repeatable decisions. OpenAI itself takes
    the length cap as ``max_completion_tokens`` (its reasoning models refuse
    ``max_tokens``); other servers as ``max_tokens``.
    """
    host = (urlsplit(config.base_url).hostname or "").lower()
    cap_key = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
    request: dict[str, Any] = {"model": model, "messages": [dict(m) for m in messages],
                               cap_key: max_tokens}
    if temperature is not None:
        request["temperature"] = temperature
    fmt = response_format(resolve_json_mode(config.json_mode, config.base_url), schema)
    if fmt is not None:
        request["response_format"] = fmt
    return request


def _status_text(exc: Any) -> str:
    return describe_status_error(exc, ())


def _completion(reply: Any, model: str, mode: str, started: float,
                secrets: Sequence[str | None], max_bytes: int = DEFAULT_MAX_REPLY_BYTES
                ) -> Completion:
    r"""Read the reply; the key is redacted from every text in it.

    A server (or a proxy) may echo the request, key included, into the reply
    text or model name: redacting here covers every reader — the selector's
    rationale, Slartibartfast, the decision log's raw reply. A lone surrogate
    (JSON may escape one, ``"\\udcff"``) becomes U+FFFD here, since neither
    SQLite nor stdout would take it. A text over ``max_bytes`` is cut there
    (``truncated`` ``bytes``, finish reason ``length``).
    """
    choices = getattr(reply, "choices", None) or []
    if not isinstance(choices, list) or not choices:
        raise LLMError("the server's reply holds no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    usage = getattr(reply, "usage", None)
    text, cut = cap_text(str(getattr(message, "content", None) or ""), max_bytes)
    return Completion(
        text=scrub_surrogates(redact(text, secrets, REPLY_SECRET_MIN)),
        finish_reason="length" if cut else getattr(choice, "finish_reason", None),
        truncated="bytes" if cut else None,
        model=scrub_surrogates(redact(str(getattr(reply, "model", None) or model), secrets,
                                      REPLY_SECRET_MIN)),
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        latency_ms=round((time.monotonic() - started) * 1000, 1),
        json_mode=mode,
        tool_calls=tuple(_tool_call(c, i) for i, c in
                         enumerate(getattr(message, "tool_calls", None) or [])),
    )


def _tool_call(call: Any, index: int) -> ToolCall:
    function = getattr(call, "function", None)
    return ToolCall(id=str(getattr(call, "id", None) or f"call_{index}"),
                    name=str(getattr(function, "name", None) or ""),
                    arguments=str(getattr(function, "arguments", None) or ""))


class _ToolCallParts:
    """A streamed reply's tool calls, assembled from their deltas by index."""

    def __init__(self) -> None:
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, deltas: Any) -> None:
        """Take one chunk's ``delta.tool_calls``: id and name once, arguments in pieces."""
        for position, delta in enumerate(deltas or []):
            index = getattr(delta, "index", None)
            slot = self._calls.setdefault(position if index is None else int(index),
                                          {"id": "", "name": "", "arguments": ""})
            slot["id"] = getattr(delta, "id", None) or slot["id"]
            function = getattr(delta, "function", None)
            slot["name"] += getattr(function, "name", None) or ""
            slot["arguments"] += getattr(function, "arguments", None) or ""

    def calls(self) -> tuple[ToolCall, ...]:
        """Return the calls, in index order (a call without an id gets ``call_<index>``)."""
        return tuple(ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                     for i, c in sorted(self._calls.items()))


class StreamRedactor:
    """Passes streamed text on, holding back just enough that no key is ever let through.

    A key can arrive split over two pieces; the tail that could be the start
    of a key (one character shorter than the longest key) waits for the next
    piece, and whole keys are replaced by ``[REDACTED]`` before anything is
    passed on.

    Args:
        secrets: the values to hide (``REPLY_SECRET_MIN`` characters or longer).
        sink: receives the redacted text.
    """

    def __init__(self, secrets: Sequence[str | None], sink: TextSink) -> None:
        self._secrets = [s for s in secrets if s and len(s) >= REPLY_SECRET_MIN]
        self._hold = max((len(s) for s in self._secrets), default=1) - 1
        self._buffer = ""
        self._sink = sink

    def feed(self, piece: str) -> None:
        """Take one piece; pass on what can no longer be part of a key."""
        self._buffer = redact(self._buffer + piece, self._secrets, REPLY_SECRET_MIN)
        cut = len(self._buffer) - self._hold
        if cut > 0:
            self._sink(self._buffer[:cut])
            self._buffer = self._buffer[cut:]

    def flush(self) -> None:
        """Pass on the rest (the stream ended)."""
        if self._buffer:
            self._sink(redact(self._buffer, self._secrets, REPLY_SECRET_MIN))
            self._buffer = ""


class _CallerRaised(Exception):
    """Carries what the caller's ``on_text`` raised past the client errors, to raise it as is."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error

    @classmethod
    def wrap(cls, on_text: TextSink) -> TextSink:
        """Return ``on_text`` with its exceptions carried in a ``_CallerRaised``."""
        def sink(piece: str) -> None:
            try:
                on_text(piece)
            except Exception as exc:
                raise cls(exc) from exc

        return sink


def cap_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """Return ``text`` cut to at most ``max_bytes`` UTF-8 bytes, and whether it was cut."""
    if len(text) * 4 <= max_bytes or len(text.encode("utf-8", "surrogatepass")) <= max_bytes:
        return text, False
    return text.encode("utf-8", "surrogatepass")[:max_bytes].decode("utf-8", "ignore"), True


@frozen
class _Caps:
    """What a streamed reply may hold: ``tokens`` (one per text chunk) and ``bytes`` of text."""

    tokens: int
    bytes: int


def _read_stream(stream: Any, model: str, mode: str, started: float,
                 secrets: Sequence[str | None], on_text: TextSink, caps: _Caps) -> Completion:
    """Read a streamed reply to its end or its cap; every piece goes through the redactor.

    Past ``caps`` (text chunks counted as tokens, as servers send one token a chunk,
    and UTF-8 bytes of text; a server may ignore ``max_tokens``) or when the raw body
    outgrows its cap, the stream is closed and the text so far kept: finish reason
    ``length``, ``truncated`` saying which cap.

    Raises:
        LLMError: the stream ended without a finish reason (a server that died
            mid-reply), or brought no choices at all.
    """
    from vance_cli.llm_guard import ReplyTooLarge  # heavy: openai

    pieces: list[str] = []
    finish: str | None = None
    answered_by = model
    usage: Any = None
    redactor = StreamRedactor(secrets, on_text)
    saw_choice = False
    count = size = 0
    cut: str | None = None
    calls = _ToolCallParts()
    try:
        for chunk in stream:
            answered_by = getattr(chunk, "model", None) or answered_by
            usage = getattr(chunk, "usage", None) or usage
            for choice in getattr(chunk, "choices", None) or []:
                saw_choice = True
                calls.feed(getattr(getattr(choice, "delta", None), "tool_calls", None))
                piece = getattr(getattr(choice, "delta", None), "content", None)
                if piece:
                    count += 1
                    piece, over = cap_text(piece, caps.bytes - size)
                    size += len(piece.encode("utf-8", "surrogatepass"))
                    pieces.append(piece)
                    redactor.feed(piece)
                    cut = "bytes" if over else None
                finish = getattr(choice, "finish_reason", None) or finish
            if cut is None and finish is None and count >= caps.tokens:
                cut = "tokens"
            if cut:
                break
    except ReplyTooLarge:
        cut = "bytes"
    finally:
        stream.close()
    redactor.flush()
    if not saw_choice:
        raise LLMError("the server's reply holds no choices")
    if finish is None and cut is None:
        raise LLMError("the reply stream ended before the model finished")
    return Completion(
        text=scrub_surrogates(redact("".join(pieces), secrets, REPLY_SECRET_MIN)),
        finish_reason="length" if cut and finish is None else finish,
        model=redact(str(answered_by), secrets, REPLY_SECRET_MIN),
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None) or (count if cut else None),
        latency_ms=round((time.monotonic() - started) * 1000, 1), json_mode=mode,
        truncated=cut, tool_calls=calls.calls())


def _only_model(client: Any, secrets: Sequence[str | None]) -> str:
    """Ask ``/v1/models`` and return the server's model when it serves exactly one."""
    names = [m.id for m in client.models.list()]
    if len(names) == 1:
        return str(names[0])
    shown = ", ".join(names[:10]) + (" …" if len(names) > 10 else "")
    raise LLMError(redact(
        "no model configured (set llm.model)" + (f"; the server offers: {shown}" if names else ""),
        secrets))


def describe_status_error(exc: Any, secrets: Sequence[str | None]) -> str:
    """Return ``HTTP <status>: <server message>``, one line, key redacted.

    Args:
        exc: an ``openai.APIStatusError``.
        secrets: values to redact.
    """
    body = getattr(exc, "body", None)
    text = ""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        text = str(inner.get("message", inner) if isinstance(inner, Mapping) else inner)
    elif body:
        text = str(body)
    if not text:
        text = str(getattr(exc, "message", "") or "")
    text = redact(_one_line(text), secrets)[:MAX_ERROR_TEXT]  # redact first: a cut key survives
    return f"HTTP {exc.status_code}" + (f": {text}" if text else "")


def _one_line(text: str) -> str:
    return scrub_surrogates(" ".join(text.split()))
