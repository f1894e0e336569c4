"""Structured output: which ``response_format`` to send, and the step down after a refusal.

Rules (docs/configuration.md, ``llm.json_mode``):
- ``auto`` chooses per endpoint (``resolve_json_mode``): ``json_schema`` for OpenAI and
  local or private-network hosts, ``json_object`` for other hosted APIs.
- In ``auto`` a server that refuses the request steps down one rung at a time
  (``JSON_LADDER``: ``json_schema`` → ``json_object`` with the schema, which llama.cpp's
  server turns into a grammar → no ``response_format``, read tolerantly by the caller), on
  a 400/422, or on a 500 whose message names the field (llama-cpp-python's server). The
  rung that worked is kept per endpoint for the rest of the process (``remember``), so
  only the first call pays for the refusals. Explicit modes never change.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

AUTO_DOWNGRADE_STATUSES = frozenset({400, 422})
"""Statuses after which a smaller request is tried once (``reduce_request``): servers
answer these to a parameter they do not support."""

JSON_LADDER = {"json_schema": "json_object_schema", "json_object_schema": "none",
               "json_object": "none"}
"""The next rung down after a server refused a structured-output mode (``auto`` only).
``json_object_schema`` is ``{"type": "json_object", "schema": …}`` (llama.cpp's form)."""

FORMAT_WORDS = ("response_format", "json_schema", "json_object")
"""Words by which a server's error message says it refused the structured-output field."""

FORMAT_STATUSES = frozenset({500})
"""Statuses beyond 400/422 after which the format steps down, when the message names it:
llama-cpp-python's server answers an unknown ``response_format`` type with a 500."""

MAX_REDUCTIONS = 4
"""Smaller requests tried at most after refusals (stream options, temperature, two rungs)."""

def _is_local(host: str) -> bool:
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def resolve_json_mode(mode: str, base_url: str) -> str:
    """Return the structured-output mode to send for ``mode`` at ``base_url``.

    ``auto`` chooses per endpoint:

    - ``api.openai.com`` → ``json_schema`` (strict structured outputs);
    - a local or private-network host (localhost, 127.0.0.1, 10.x, 192.168.x,
      ``*.local``), where Ollama, vLLM, LM Studio and llama.cpp server run →
      ``json_schema``: all four accept it and turn it into constrained
      decoding, while LM Studio rejects ``json_object``;
    - any other host (hosted OpenAI-compatible APIs and proxies) →
      ``json_object``, the mode most of them accept (some reject
      ``json_schema``).

    In ``auto`` mode a server that rejects the request steps down
    ``JSON_LADDER`` (see ``reduce_request``); the rung that worked is then
    this function's answer for the endpoint.

    Args:
        mode: the ``llm.json_mode`` setting.
        base_url: the endpoint.
    """
    if mode != "auto":
        return mode
    if base_url in ACCEPTED:
        return ACCEPTED[base_url]
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "api.openai.com" or _is_local(host):
        return "json_schema"
    return "json_object"


ACCEPTED: dict[str, str] = {}
"""Base URL → the rung a refusal stepped down to, for this process (``auto`` only)."""


def response_format(mode: str, schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Return the ``response_format`` request field for a resolved mode (None for ``none``)."""
    if mode == "json_schema" and schema is not None:
        return {"type": "json_schema",
                "json_schema": {"name": "answer", "strict": True, "schema": dict(schema)}}
    if mode == "json_object_schema" and schema is not None:
        return {"type": "json_object", "schema": dict(schema)}
    if mode in ("json_schema", "json_object", "json_object_schema"):
        return {"type": "json_object"}
    return None


def json_mode_hint(status: int, message: str, sent: str) -> str | None:
    """Say how to change ``llm.json_mode`` when a server refused the structured-output request.

    Args:
        status: the HTTP status.
        message: the server's error message.
        sent: the ``response_format`` type sent (``json_schema``, ``json_object``, ``none``).

    Returns:
        E.g. ``the server refuses llm.json_mode 'json_object': try 'vance config set
        llm.json_mode json_schema'``; None when the error is not about it.
    """
    lowered = message.lower()
    if status not in AUTO_DOWNGRADE_STATUSES or sent == "none" or not any(
            word in lowered for word in ("response_format", "json_schema", "json_object")):
        return None
    named = [m for m in ("json_schema", "json_object") if m in lowered and m != sent]
    wanted = named[0] if named else "none"
    return (f"the server refuses llm.json_mode '{sent}': try 'vance config set llm.json_mode "
            f"{wanted}'" + ("" if wanted == "none" else " (or none)"))


def reduce_request(request: Mapping[str, Any], status: int, text: str,
                   auto: bool, schema: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Return a smaller request to try after a refusal, or None to give up.

    After a 400/422: a server that rejects ``stream_options`` or
    ``temperature`` (reasoning models) gets the request without it. In
    ``auto`` JSON mode a server that rejects the request otherwise — or
    answers 500 with a message naming the structured-output field, as
    llama-cpp-python's server does — gets the next rung of ``JSON_LADDER``.
    Explicit JSON modes are never changed, and a refusal about the context
    window changes nothing (the caller may shorten the prompt).

    Args:
        request: the request that failed.
        status: its HTTP status.
        text: the server's error message.
        auto: ``llm.json_mode`` is ``auto``.
        schema: the expected object's JSON schema (for the ``json_object_schema`` rung).
    """
    lowered = text.lower()
    names_format = any(word in lowered for word in FORMAT_WORDS)
    if status not in AUTO_DOWNGRADE_STATUSES and not (status in FORMAT_STATUSES
                                                      and names_format):
        return None
    if "context" in lowered and not names_format:
        return None  # a prompt too long for the context window: no format makes it fit
    reduced = dict(request)
    if status in AUTO_DOWNGRADE_STATUSES and "stream_options" in lowered:
        reduced.pop("stream_options", None)
    elif status in AUTO_DOWNGRADE_STATUSES and "temperature" in lowered:
        reduced.pop("temperature", None)
    elif auto and "response_format" in request:
        fmt = response_format(JSON_LADDER.get(mode_of(request), "none"), schema)
        if fmt is None:
            reduced.pop("response_format")
        else:
            reduced["response_format"] = fmt
    return reduced if reduced != request else None


def remember(base_url: str, mode: str) -> None:
    """Keep ``mode`` as the rung ``auto`` sends to ``base_url`` from now on (this process)."""
    ACCEPTED[base_url] = mode


def mode_of(request: Mapping[str, Any]) -> str:
    """Return the structured-output mode a request body carries (``none`` without one)."""
    fmt = request.get("response_format")
    if not isinstance(fmt, Mapping):
        return "none"
    return "json_object_schema" if "schema" in fmt else str(fmt["type"])
