"""Settings: one frozen value resolved from flags, environment, config file and defaults.

Rule (docs/documents.md; docs/configuration.md): each key is taken from the first source that has
it, in this order:

1. command-line flags (``--tenant`` …),
2. the environment (``VANCE_TENANT``, ``VANCE_LLM_MODEL`` …),
3. the config file (``<config>/config.yaml``, nested mapping, dotted keys),
4. fallback environment variables — only ``OPENAI_BASE_URL`` and
   ``OPENAI_API_KEY``, read *after* the config file so that a global OpenAI
   key in a shell profile never overrides what the vance config chose,
5. defaults.

The table ``KEYS`` is the single list of settings; ``vance config show``,
``vance config set`` and ``load_settings`` all read it. Values are coerced
and checked per key; an error names the dotted key path and its source.
"""

from __future__ import annotations

import getpass
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vance_cli.base import files, yamlio
from vance_cli.base.errors import ConfigError
from vance_cli.base.names import ID_MAX, check_id, close_matches
from vance_cli.base.paths import Paths
from vance_cli.base.records import frozen
from vance_cli.base.text_input import check_utf8
from vance_cli.base.yaml_types import as_text

JSON_MODES = ("auto", "json_schema", "json_object", "none")
"""Values of ``llm.json_mode``; ``auto`` picks per endpoint (see ``vance_cli.llm``)."""

COMBINE_MODES = ("offline-first", "llm-checked", "llm")
"""Values of ``selector.combine``: how the LLM and the offline selector combine
(docs/delegate.md "How the two selectors combine")."""


def _to_str(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("expected a string")

    # env values are decoded with surrogateescape: a non-UTF-8 byte must not get further
    return check_utf8(str(as_text(value)).strip(), "the value")


def _to_id(kind: str) -> Callable[[Any], str]:
    """Coercer of a tenant, user or session id: one path segment (``documents.check_id``)."""

    def coerce(value: Any) -> str:
        return check_id(_to_str(value), kind)

    return coerce


def _to_project(value: Any) -> str:
    """Coercer of the project id: as ``_to_id``, but empty means "no project"."""
    text = _to_str(value)
    return _to_id("project")(text) if text else ""


HOUR = 3600.0
"""Seconds in an hour."""

WEEK = 7 * 24 * HOUR
"""Seconds in a week."""

LLM_TIMEOUT_MAX = HOUR
"""Longest ``llm.timeout``, in seconds per attempt: a local model on a CPU may need
minutes; an hour is more than any answer is worth waiting for, and ``inf`` would
make the HTTP client overflow."""

FALLBACK_TIMEOUT_MAX = WEEK
"""Longest Slartibartfast cutoff, in seconds — ``fallback.timeout`` and the
``--fallback-timeout`` flag alike: a larger value is more likely a typo than
intent, and a deadline must stay a representable date."""

HEARTBEAT_MAX = HOUR
"""Longest ``process.heartbeat_interval``, in seconds."""

STALE_TIMEOUT_MAX = WEEK
"""Longest ``process.stale_timeout``, in seconds."""
TAKEOVERS_MAX = 100
"""Most ``process.max_takeovers``."""

MAX_RETRIES_MAX = 10
"""Most ``llm.max_retries``: with the client's backoff (up to 8 s) and ``llm.timeout``
per attempt, more retries only hide a dead endpoint."""

MAX_REPAIRS_MAX = 10
"""Most ``fallback.max_repairs``: each repair is one more LLM call."""

TURN_CALLS_MAX = 1000
"""Most ``turn.max_llm_calls``."""

PROCESS_TOKENS_MAX = 100_000_000
"""Most ``process.max_tokens``."""

TOOL_MEMORY_MB_MAX = 1_048_576
"""Most ``tools.python.memory_mb`` (a TiB: more is a typo)."""

FETCH_BYTES_MAX = 100_000_000
"""Most ``tools.fetch.max_bytes``."""

REPLY_BYTES_MAX = 100_000_000
"""Most ``llm.max_reply_bytes``: the raw body may be 16 times it, in memory at once."""

LOCAL_CONTEXT_MAX = 1_048_576
"""Largest ``llm.local_context``, in tokens."""

URL_SCHEMES = ("http", "https")
"""Schemes an LLM endpoint (``llm.base_url``) may use."""


def check_seconds(value: Any, maximum: float) -> float:
    """Return ``value`` as a number of seconds when it is finite, > 0 and at most ``maximum``.

    The one rule for every duration setting and for the ``--fallback-timeout`` flag.

    Args:
        value: a number or its text (``"30"``, ``"2.5"``).
        maximum: the largest accepted value, in seconds.

    Raises:
        ValueError: not a number, ``nan``/``inf``, 0 or less, or above ``maximum``.
    """
    if isinstance(value, bool):
        raise ValueError("expected a number of seconds")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError("expected a number of seconds") from None
    if not (math.isfinite(number) and 0 < number <= maximum):
        raise ValueError(f"must be more than 0 and at most {maximum:g} seconds"
                         f" ({_duration(maximum)}), not {value}")
    return number


def _duration(seconds: float) -> str:
    return {HOUR: "an hour", WEEK: "a week"}.get(seconds, f"{seconds:g} s")


def _to_seconds(maximum: float) -> Callable[[Any], float]:
    """Coercer of a duration setting: ``check_seconds`` with its maximum."""

    def coerce(value: Any) -> float:
        return check_seconds(value, maximum)

    return coerce


def _to_count(maximum: int) -> Callable[[Any], int]:
    """Coercer of a whole number from 0 to ``maximum``."""

    def coerce(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError("expected a whole number")
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError("expected a whole number") from None
        if not 0 <= number <= maximum:
            raise ValueError(f"must be from 0 to {maximum}, not {number}")
        return number

    return coerce


def _to_url(value: Any) -> str:
    """Coercer of an endpoint URL: http or https, with a host (and a valid port, if any)."""
    text = _to_str(value)
    parts = urlsplit(text)
    shown = repr(text) if "@" not in text else "the URL given"  # it may hold credentials
    if parts.scheme.lower() not in URL_SCHEMES or not parts.hostname:
        raise ValueError(f"expected an http:// or https:// URL with a host, e.g. "
                         f"http://localhost:11434/v1, not {shown}")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError:
        raise ValueError(f"the port of {shown} is not a number from 0 to 65535") from None
    return text


STATE_SCHEMES = ("sqlite", "postgresql", "postgres")
"""URL schemes of ``state.url``: the embedded SQLite file, or a PostgreSQL server."""


def _to_state_url(value: Any) -> str:
    """Coercer of ``state.url``: ``sqlite://``, ``sqlite:///PATH`` or ``postgresql://…``."""
    text = _to_str(value)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    shown = repr(text) if "@" not in text else "the URL given"  # it may hold a password
    if scheme not in STATE_SCHEMES:
        raise ValueError(f"expected a sqlite:// or postgresql:// URL, not {shown}")
    if scheme == "sqlite" and (parts.netloc or parts.query or
                               (parts.path and not parts.path.startswith("/"))):
        raise ValueError(f"expected sqlite:// (the default file) or sqlite:///PATH (an"
                         f" absolute path), not {shown}")
    return text


TOKEN_MIN = 16
"""Fewest characters of ``mcp.token``: a bearer token guards a server on the network."""

TOKEN_MAX = 4096
"""Most characters of ``mcp.token`` (an HTTP header line stays short)."""


def _to_token(value: Any) -> str:
    """Coercer of a bearer token: 16 to 4096 visible ASCII characters, no spaces."""
    text = _to_str(value)
    if not TOKEN_MIN <= len(text) <= TOKEN_MAX:
        raise ValueError(f"expected {TOKEN_MIN} to {TOKEN_MAX} characters, not {len(text)};"
                         " e.g. python3 -c 'import secrets; print(secrets.token_urlsafe(32))'")
    if not all("!" <= char <= "~" for char in text):
        raise ValueError("expected visible ASCII characters only (no spaces), as an HTTP"
                         " Authorization header carries")
    return text


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _to_combine(value: Any) -> str:
    text = _to_str(value).lower()
    if text not in COMBINE_MODES:
        raise ValueError(f"expected one of {', '.join(COMBINE_MODES)}")
    return text


def split_patterns(text: str) -> list[str]:
    """Split ``"read_file, fetch_url(https://a/*,b)"`` at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth <= 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def _to_patterns(value: Any) -> tuple[str, ...]:
    """Coercer of a list of tool patterns: a YAML list, or one text with commas between them."""
    if isinstance(value, list | tuple):
        items = [_to_str(item) for item in value]
    else:
        items = split_patterns(_to_str(value))
    for item in items:
        if not item or item.count("(") != item.count(")"):
            raise ValueError(f"{item!r} is not a tool pattern (NAME or NAME(ARGUMENT-PATTERN))")
    return tuple(items)


TOOL_CALLING = ("auto", "native", "json")
"""Values of ``tools.calling``: how the tool loop asks for calls (docs/tools.md#the-loop)."""


def _to_tool_calling(value: Any) -> str:
    text = _to_str(value).lower()
    if text not in TOOL_CALLING:
        raise ValueError(f"expected one of {', '.join(TOOL_CALLING)}")
    return text


def _to_json_mode(value: Any) -> str:
    text = _to_str(value).lower()
    if text not in JSON_MODES:
        raise ValueError(f"expected one of {', '.join(JSON_MODES)}")
    return text


@frozen
class KeySpec:
    """One setting: its dotted key, coercion, sources and help.

    Attributes:
        key: dotted name as in the config file and ``vance config set``.
        coerce: turns a raw value into the typed one; raises ValueError with a reason.
        env: environment variables read before the config file, first wins.
        fallback_env: environment variables read after the config file.
        flag: name of the command-line flag that sets it, if any.
        secret: never shown in full (``config show`` masks it).
        url: a URL whose user info (``user:password@``) ``config show`` masks.
        path: a file path, made absolute when read (``absolute_path``) and
            stored absolute by ``vance config set``.
        help: one line for ``config show`` and docs/configuration.md.
    """

    key: str
    coerce: Callable[[Any], Any]
    env: tuple[str, ...] = ()
    fallback_env: tuple[str, ...] = ()
    flag: str | None = None
    secret: bool = False
    url: bool = False
    path: bool = False
    help: str = ""

    @property
    def attr(self) -> str:
        """Attribute name on ``Settings`` (dots become underscores)."""
        return self.key.replace(".", "_")


KEYS: tuple[KeySpec, ...] = (
    KeySpec("tenant", _to_id("tenant"), ("VANCE_TENANT",), flag="tenant", help="tenant id"),
    KeySpec("project", _to_project, ("VANCE_PROJECT",), flag="project",
            help="project id; '_tenant' (or empty) means no project"),
    KeySpec("user", _to_id("user"), ("VANCE_USER",), flag="user",
            help="user name (wizard user layer)"),
    KeySpec("lang", _to_str, ("VANCE_LANG",), flag="lang",
            help="language for wizard texts: de, en, …"),
    KeySpec("session", _to_id("session"), ("VANCE_SESSION",), flag="session",
            help="session id; process names are unique per session"),
    KeySpec("llm.base_url", _to_url, ("VANCE_LLM_BASE_URL",), ("OPENAI_BASE_URL",), url=True,
            help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"),
    KeySpec("llm.model", _to_str, ("VANCE_LLM_MODEL",), help="model name sent to the endpoint"),
    KeySpec("llm.api_key", _to_str, ("VANCE_LLM_API_KEY",), ("OPENAI_API_KEY",), secret=True,
            help="API key; keyless local servers need none"),
    KeySpec("llm.timeout", _to_seconds(LLM_TIMEOUT_MAX), ("VANCE_LLM_TIMEOUT",),
            help="seconds one LLM request may take"),
    KeySpec("llm.max_retries", _to_count(MAX_RETRIES_MAX), ("VANCE_LLM_MAX_RETRIES",),
            help="retries of a failed LLM request (connection errors, 429, 5xx)"),
    KeySpec("llm.max_reply_bytes", _to_count(REPLY_BYTES_MAX), ("VANCE_LLM_MAX_REPLY_BYTES",),
            help="UTF-8 bytes of one LLM reply's text kept at most (more is cut: truncated)"),
    KeySpec("llm.json_mode", _to_json_mode, ("VANCE_LLM_JSON_MODE",),
            help="structured output: auto | json_schema | json_object | none"),
    KeySpec("llm.local_model", _to_str, ("VANCE_LLM_LOCAL_MODEL",), path=True,
            help="GGUF model file: vance starts a llama.cpp server for it when llm.base_url"
                 " is not set (needs vance[local])"),
    KeySpec("llm.local_command", _to_str, ("VANCE_LLM_LOCAL_COMMAND",),
            help="command that starts the llama.cpp server (default: this python"
                 " -m llama_cpp.server)"),
    KeySpec("llm.local_context", _to_count(LOCAL_CONTEXT_MAX), ("VANCE_LLM_LOCAL_CONTEXT",),
            help="context window of the local model server, in tokens (--n_ctx; 0: the"
                 " model's own)"),
    KeySpec("llm.local_start_timeout", _to_seconds(HOUR), ("VANCE_LLM_LOCAL_START_TIMEOUT",),
            help="seconds the local model server may take to start"),
    KeySpec("selector.combine", _to_combine, ("VANCE_SELECTOR_COMBINE",),
            help="how the LLM and the offline selector combine: offline-first, llm-checked "
                 "or llm"),
    KeySpec("catalog.file", _to_str, ("VANCE_ENGINE_CATALOG",), path=True,
            help="operator's engine catalog file, activated by 'vance catalog reload'"),
    KeySpec("documents.shared", _to_str, ("VANCE_DOCUMENTS_SHARED",), path=True,
            help="a folder shared by the team (a git checkout) that is the tenant layer:"
                 " recipes/, wizards/, prompts/, strategies/ and catalog/engines.yaml"),
    KeySpec("fallback.timeout", _to_seconds(FALLBACK_TIMEOUT_MAX), ("VANCE_FALLBACK_TIMEOUT",),
            help="seconds the Slartibartfast fallback may run"),
    KeySpec("fallback.max_repairs", _to_count(MAX_REPAIRS_MAX), ("VANCE_FALLBACK_MAX_REPAIRS",),
            help="times Slartibartfast may repair a recipe that failed validation"),
    KeySpec("log.tasks", _to_bool, ("VANCE_LOG_TASKS",),
            help="store task text in the decision log (false: only its hash)"),
    KeySpec("mcp.token", _to_token, ("VANCE_MCP_TOKEN",), secret=True,
            help="bearer token 'vance mcp --http' requires of every request (needed to"
                 " listen on an address other than loopback)"),
    KeySpec("state.url", _to_state_url, ("VANCE_STATE_URL",), url=True,
            help="where the state lives: sqlite:// (the file in the state folder),"
                 " sqlite:///PATH, or postgresql://… (a team's server; needs vance[team])"),
    KeySpec("process.heartbeat_interval", _to_seconds(HEARTBEAT_MAX), ("VANCE_HEARTBEAT_INTERVAL",),
            help="seconds between heartbeats of a running worker (at most a third of"
                 " process.stale_timeout is used)"),
    KeySpec("process.stale_timeout", _to_seconds(STALE_TIMEOUT_MAX), ("VANCE_STALE_TIMEOUT",),
            help="seconds without a heartbeat after which a RUNNING process is closed as STALE"),
    KeySpec("process.max_takeovers", _to_count(TAKEOVERS_MAX), ("VANCE_MAX_TAKEOVERS",),
            help="times another worker may take over a turn whose worker died (team mode);"
                 " past that the process closes STALE"),
    KeySpec("process.max_tokens", _to_count(PROCESS_TOKENS_MAX), ("VANCE_PROCESS_MAX_TOKENS",),
            help="LLM tokens (in + out) one process may use over all its turns"),
    KeySpec("turn.max_llm_calls", _to_count(TURN_CALLS_MAX), ("VANCE_TURN_MAX_LLM_CALLS",),
            help="LLM calls one turn of a process may make"),
    KeySpec("turn.timeout", _to_seconds(WEEK), ("VANCE_TURN_TIMEOUT",),
            help="seconds one turn of a process may run"),
    KeySpec("budget.max_llm_calls", _to_count(TURN_CALLS_MAX), ("VANCE_BUDGET_MAX_LLM_CALLS",),
            help="ceiling of a recipe's params.budget.llmCalls"),
    KeySpec("budget.max_tokens", _to_count(PROCESS_TOKENS_MAX), ("VANCE_BUDGET_MAX_TOKENS",),
            help="ceiling of a recipe's params.budget.tokens"),
    KeySpec("budget.max_turn_seconds", _to_seconds(WEEK), ("VANCE_BUDGET_MAX_TURN_SECONDS",),
            help="ceiling of a recipe's params.budget.turnSeconds"),
    KeySpec("tools.allow", _to_patterns, ("VANCE_TOOLS_ALLOW",),
            help="tool calls allowed without asking: patterns such as read_file,"
                 " fetch_url(https://docs.python.org/*), srv.*"),
    KeySpec("tools.deny", _to_patterns, ("VANCE_TOOLS_DENY",),
            help="tool calls always refused (deny wins over allow)"),
    KeySpec("tools.ask", _to_patterns, ("VANCE_TOOLS_ASK",),
            help="tool calls that ask first (allow wins over ask)"),
    KeySpec("tools.fetch.allow_private", _to_bool, ("VANCE_TOOLS_FETCH_ALLOW_PRIVATE",),
            help="fetch_url may reach loopback and private addresses"),
    KeySpec("tools.fetch.max_bytes", _to_count(FETCH_BYTES_MAX), ("VANCE_TOOLS_FETCH_MAX_BYTES",),
            help="bytes of one page fetch_url reads at most"),
    KeySpec("tools.python.timeout", _to_seconds(HOUR), ("VANCE_TOOLS_PYTHON_TIMEOUT",),
            help="seconds one run_python or run_command call may run (wall time; CPU"
                 " time likewise)"),
    KeySpec("tools.python.memory_mb", _to_count(TOOL_MEMORY_MB_MAX),
            ("VANCE_TOOLS_PYTHON_MEMORY_MB",),
            help="address space of one run_python or run_command call, in MiB"),
    KeySpec("tools.calling", _to_tool_calling, ("VANCE_TOOLS_CALLING",),
            help="how the tool loop asks for calls: native (the tools API), json (one JSON"
                 " action per call, for models without tool calling), auto (native, json"
                 " after a refusal or a call written as text)"),
)
"""Every setting, in display order."""

_BY_KEY = {spec.key: spec for spec in KEYS}


def spec_for(key: str) -> KeySpec:
    """Return the KeySpec of a dotted key.

    Raises:
        ConfigError: unknown key; the message names close keys ("did you mean"), else
            lists the known ones.
    """
    try:
        return _BY_KEY[key]
    except KeyError:
        close = close_matches(key, list(_BY_KEY), limit=3)
        hint = (f" — did you mean {', '.join(repr(c) for c in close)}?" if close
                else f"; known keys: {', '.join(_BY_KEY)}")
        raise ConfigError(f"unknown config key '{key}'{hint}", key=key, close=close) from None


def locale_language(environ: Mapping[str, str]) -> str | None:
    """Return the language of the POSIX locale (``LANG=de_DE.UTF-8`` → ``de``), or None.

    Rule: docs/wizards.md "Texts and language"; ``LC_ALL`` beats ``LC_MESSAGES`` beats ``LANG``;
    ``C`` and ``POSIX`` carry no language.
    """
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "").strip()
        if value:
            lang = value.split(".")[0].split("_")[0].split("@")[0].lower()
            if lang in ("c", "posix", ""):
                return None
            return lang
    return None


def _default_user() -> str:
    """Return the OS user name as a valid user id (other characters become ``_``)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return "user"
    # An id is a folder name (docs/documents.md): "DOMAIN\\anna" or "Anna Maier" cannot be one.
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:ID_MAX]
    return safe if safe.strip(".") else "user"


def _defaults(environ: Mapping[str, str]) -> dict[str, Any]:
    return {
        "tenant": "default",
        "project": "default",
        "user": _default_user(),
        "lang": locale_language(environ) or "en",
        "session": "default",
        "llm.base_url": None,
        "llm.model": None,
        "llm.api_key": None,
        "llm.timeout": 30.0,
        "llm.max_retries": 2,
        "llm.json_mode": "auto",
        "llm.max_reply_bytes": 1_000_000,
        "llm.local_model": None,
        "llm.local_command": None,
        "llm.local_context": 8192,
        "llm.local_start_timeout": 120.0,
        "selector.combine": "offline-first",
        "catalog.file": None,
        "documents.shared": None,
        "fallback.timeout": 240.0,
        "fallback.max_repairs": 2,
        "log.tasks": True,
        "mcp.token": None,
        "state.url": None,
        "process.heartbeat_interval": 5.0,
        "process.stale_timeout": 30.0,
        "process.max_takeovers": 3,
        "process.max_tokens": 500_000,
        "turn.max_llm_calls": 20,
        "turn.timeout": 600.0,
        "budget.max_llm_calls": 200,
        "budget.max_tokens": 5_000_000,
        "budget.max_turn_seconds": 3600.0,
        "tools.allow": (),
        "tools.deny": (),
        "tools.ask": (),
        "tools.fetch.allow_private": False,
        "tools.fetch.max_bytes": 2_000_000,
        "tools.python.timeout": 30.0,
        "tools.python.memory_mb": 1024,
        "tools.calling": "auto",
    }


@frozen
class Settings:
    """Resolved settings; ``origin`` says where each key's value came from.

    Attributes:
        paths: the folders (from ``--home``/``VANCE_HOME``/platformdirs).
        origin: dotted key → ``"flag"``, ``"env:NAME"``, ``"file"`` or ``"default"``.
        warnings: problems that did not stop loading (unknown keys in the file).
    """

    paths: Paths
    tenant: str
    project: str
    user: str
    lang: str
    session: str
    llm_base_url: str | None
    llm_model: str | None
    llm_api_key: str | None = field(repr=False)
    llm_timeout: float
    llm_max_retries: int
    llm_json_mode: str
    llm_max_reply_bytes: int
    llm_local_model: str | None
    llm_local_command: str | None
    llm_local_context: int
    llm_local_start_timeout: float
    selector_combine: str
    catalog_file: str | None
    documents_shared: str | None
    fallback_timeout: float
    fallback_max_repairs: int
    log_tasks: bool
    mcp_token: str | None = field(repr=False)
    state_url: str | None
    process_heartbeat_interval: float
    process_stale_timeout: float
    process_max_takeovers: int
    process_max_tokens: int
    turn_max_llm_calls: int
    turn_timeout: float
    budget_max_llm_calls: int
    budget_max_tokens: int
    budget_max_turn_seconds: float
    tools_allow: tuple[str, ...]
    tools_deny: tuple[str, ...]
    tools_ask: tuple[str, ...]
    tools_fetch_allow_private: bool
    tools_fetch_max_bytes: int
    tools_python_timeout: float
    tools_python_memory_mb: int
    tools_calling: str
    origin: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def has_project(self) -> bool:
        """False when the project is ``_tenant`` or empty: working at tenant level."""
        return self.project not in ("", "_tenant")

    @property
    def llm_configured(self) -> bool:
        """True when a base URL, an API key or a local model is set (else offline)."""
        return bool(self.llm_base_url or self.llm_api_key or self.llm_local_model)

    @property
    def llm_local(self) -> bool:
        """True when ``llm.local_model`` is set and ``llm.base_url`` is not: the local server."""
        return bool(self.llm_local_model) and not self.llm_base_url

    @property
    def state_target(self) -> Path | str:
        """The state store: a SQLite file's path, or a PostgreSQL URL (``state.url``)."""
        url = self.state_url
        if not url:
            return self.paths.db_file
        parts = urlsplit(url)
        if parts.scheme.lower() != "sqlite":
            return url
        return Path(parts.path) if parts.path not in ("", "/") else self.paths.db_file

    @property
    def team(self) -> bool:
        """True when the state lives on a PostgreSQL server (team mode, docs/teams.md)."""
        return isinstance(self.state_target, str)

    def get(self, key: str) -> Any:
        """Return the value of a dotted key (``"llm.model"``)."""
        return getattr(self, spec_for(key).attr)

    def display_items(self) -> list[tuple[str, Any, str]]:
        """Return ``(key, value, origin)`` for every key, secrets masked, in ``KEYS`` order."""
        rows = []
        for spec in KEYS:
            value = getattr(self, spec.attr)
            if spec.secret and value:
                value = mask_secret(str(value))
            elif spec.url and value:
                value = mask_url(str(value))
            rows.append((spec.key, value, self.origin.get(spec.key, "default")))
        return rows


def mask_secret(value: str) -> str:
    """Return a masked form of a secret: its last 4 characters at most, never the rest."""
    if len(value) <= 8:
        return "****"
    return "****" + value[-4:]


def mask_url(value: str) -> str:
    """Return a URL with its user info masked: ``https://ann:****@host/v1``.

    A user name alone (often a token) becomes ``****@``.
    """
    parts = urlsplit(value)
    if "@" not in parts.netloc:
        return value
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, has_password, _ = userinfo.partition(":")
    masked = f"{user}:****" if has_password else "****"
    return parts._replace(netloc=f"{masked}@{host}").geturl()


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def read_config_file(path: Path) -> dict[str, Any]:
    """Read the config file as a flat ``{dotted key: raw value}`` mapping; missing file → ``{}``.

    Raises:
        DocumentError: the file is not valid YAML or not a mapping (with position), or it is
            there but cannot be read (a folder, a link loop, no permission).
    """
    if not os.path.lexists(path):  # only a missing file is "no config": a folder is an error
        return {}

    return _flatten(yamlio.load_mapping(path))


def load_settings(
    flags: Mapping[str, str | None] | None = None,
    environ: Mapping[str, str] | None = None,
    home: str | os.PathLike[str] | None = None,
) -> Settings:
    """Resolve every setting from flags > env > config file > fallback env > defaults.

    Args:
        flags: flag name (``"tenant"`` …) → value; None means not given.
        environ: environment mapping; defaults to ``os.environ``.
        home: the ``--home`` flag (config, data and state in one folder).

    Returns:
        A frozen ``Settings``.

    Raises:
        ConfigError: a value fails its key's check; message names key and source.
        DocumentError: the config file is not valid YAML.
    """
    env = os.environ if environ is None else environ
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    paths = Paths.resolve(home, env)
    file_values = read_config_file(paths.config_file)
    defaults = _defaults(env)
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for spec in KEYS:
        raw, source = _pick(spec, given, env, file_values)
        if source is None:
            values[spec.attr] = defaults[spec.key]
            origin[spec.key] = "default"
            continue
        try:
            values[spec.attr] = spec.coerce(raw)
        except ValueError as exc:
            raise ConfigError(f"{spec.key} ({_where(spec, source, paths)}): {exc}",
                              key=spec.key, source=source) from None
        if spec.path and values[spec.attr]:
            # Written by hand into the file: relative to the file; from env or a flag: to cwd.
            base = paths.config_dir if source == "file" else Path.cwd()
            values[spec.attr] = absolute_path(values[spec.attr], base)
        origin[spec.key] = source
    unknown = sorted(k for k in set(file_values) - set(_BY_KEY)
                     if not k.startswith("tools.servers."))  # tools.sources: MCP servers
    warnings = tuple(f"{paths.config_file}: unknown key '{k}' ignored" for k in unknown)
    if env.get("OPENAI_API_BASE") and values["llm_api_key"] and not values["llm_base_url"]:
        warnings += (OPENAI_API_BASE_WARNING,)
    shared = values["documents_shared"]
    if shared and not os.path.isdir(shared):
        warnings += (f"documents.shared {shared} is not a folder: the tenant layer holds no"
                     " documents",)
    return Settings(paths=paths, origin=origin, warnings=warnings, **values)


OPENAI_API_BASE_WARNING = (
    "OPENAI_API_BASE is set but not read (it is the old openai library's name): with "
    "the API key set and no base URL, vance calls the public OpenAI API at "
    "https://api.openai.com/v1 — set OPENAI_BASE_URL or VANCE_LLM_BASE_URL to your endpoint")
"""Warning when ``OPENAI_API_BASE`` would be silently ignored in favour of OpenAI itself."""


def absolute_path(value: str, base: Path) -> str:
    """Return ``value`` as an absolute path: ``~`` expanded, a relative path joined to ``base``.

    The path is normalised (``a/../b`` → ``b``) but symbolic links are kept.

    Args:
        value: the path as given.
        base: the folder a relative path is taken from.
    """
    path = Path(value).expanduser()
    return os.path.normpath(path if path.is_absolute() else base / path)


def _where(spec: KeySpec, source: str, paths: Paths) -> str:
    """Name a value's source for a message: the flag, ``env:NAME`` or the config file."""
    if source == "file":
        return str(paths.config_file)
    if source == "flag" and spec.flag:
        return f"--{spec.flag}"
    return source


def _pick(
    spec: KeySpec, flags: Mapping[str, str], env: Mapping[str, str], file_values: Mapping[str, Any]
) -> tuple[Any, str | None]:
    if spec.flag and spec.flag in flags:
        return flags[spec.flag], "flag"
    for name in spec.env:
        if env.get(name, "") != "":
            return env[name], f"env:{name}"
    if spec.key in file_values and file_values[spec.key] is not None:
        return file_values[spec.key], "file"
    for name in spec.fallback_env:
        if env.get(name, "") != "":
            return env[name], f"env:{name}"
    return None, None


def set_config_value(paths: Paths, key: str, value: str) -> Any:
    """Check ``value`` for ``key`` and write it into the config file atomically.

    Args:
        paths: where the config file lives.
        key: a dotted key from ``KEYS``.
        value: the text given on the command line; an empty string removes the key.
            A path (``catalog.file``) is stored absolute, taken from the current folder.

    Returns:
        The coerced value written (None when removed).

    Raises:
        ConfigError: unknown key or a value that fails the key's check.
        DocumentError: the existing config file is not valid YAML (it is left untouched).
    """
    spec = spec_for(key)
    typed = None
    if value != "":
        try:
            typed = spec.coerce(value)
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}", key=key) from None
        if spec.path and typed:
            typed = absolute_path(typed, Path.cwd())  # docs/configuration.md: "stored absolute"
    path = paths.config_file
    data = yamlio.load_mapping(path) if path.is_file() else {}
    node: dict[str, Any] = data
    *parents, leaf = key.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    if typed is None:
        node.pop(leaf, None)
    else:
        node[leaf] = list(typed) if isinstance(typed, tuple) else typed  # YAML has lists
    # 0600: the file may hold an API key
    files.atomic_write_text(path, yamlio.dumps(data), mode=0o600)
    return typed


def unset_config_value(paths: Paths, key: str) -> bool:
    """Remove ``key`` from the config file (atomically), so the next source decides.

    Returns:
        True when the file held the key; False when there was nothing to remove.

    Raises:
        ConfigError: unknown key (with close keys: "did you mean").
        DocumentError: the existing config file is not valid YAML (it is left untouched).
    """
    spec_for(key)
    if key not in read_config_file(paths.config_file):
        return False
    set_config_value(paths, key, "")
    return True
