"""A local llama.cpp server for ``llm.local_model``: started on demand, reused, stopped.

Rules (docs/configuration.md#local-models):
- When ``llm.local_model`` names a GGUF file and ``llm.base_url`` is not set, every LLM
  call goes to a llama.cpp server (``llama-cpp-python[server]``, the ``vance[local]``
  extra) that vance starts for that file: ``llm.local_command`` (default: this
  interpreter, ``-m llama_cpp.server``) with ``--model``, ``--host 127.0.0.1``, a free
  ``--port``, ``--n_ctx llm.local_context`` and ``--interrupt_requests False`` (the
  server's default cuts a running stream short when a second request arrives, which
  breaks council heads).
- One server per state folder. Its record (pid, port, the process's start time, model,
  command) is ``<state>/local-model/server.json``; starts and stops serialise on
  ``server.lock`` beside it (``filelock``), so two commands racing start one server.
  The server's output goes to ``server.log``.
- A recorded server is reused when its process is still the one started (same pid and
  start time), it was started for the same model, command and context, and its port takes
  a connection. Not ``GET /v1/models``: llama-cpp-python's server answers it only when the
  model is free, so a server busy with another command's reply would look dead and be
  replaced mid-reply. Otherwise it is stopped (when still running) and a new one started.
- A start is bounded by ``llm.local_start_timeout``: the server is ready when
  ``/v1/models`` answers 200; a server that exits first, or is not ready in time, is a
  ``LocalModelError`` naming the last line of its log. A missing extra or a file that is
  not a GGUF is one line before anything starts.
- Nothing here is imported on the offline paths: ``llm.LLMConfig.from_settings`` loads
  it only when ``llm.local_model`` is set.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import LocalModelError
from vance_cli.base.files import atomic_write_text
from vance_cli.base.paths import Paths, ensure
from vance_cli.base.records import frozen

if TYPE_CHECKING:
    from vance_cli.base.config import Settings

HOST = "127.0.0.1"
"""The only address the server is bound to."""

GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file."""

STOP_GRACE = 10.0
"""Seconds a server gets to exit after SIGTERM before it is killed."""

LOCK_MARGIN = 30.0
"""Seconds a command waits for the lock beyond the start timeout (another command's start)."""

POLL = 0.1
"""Seconds between two readiness checks."""

SERVER_PACKAGES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                   "pydantic_settings")
"""What ``llama-cpp-python[server]`` brings; checked when the default command is used."""

EXTRA_HINT = "pip install 'vance[local]'"
"""How to get the server (docs/configuration.md#local-models)."""


@frozen
class Server:
    """One running (or recorded) local model server.

    Attributes:
        pid: its process id (the leader of its own process group).
        port: its port on 127.0.0.1.
        started: the process's start time as the OS reports it (None where unknown).
        model: the GGUF file, absolute.
        command: the argv prefix it was started with.
        context: its ``--n_ctx``.
        alias: the model name it serves (the file's stem).
    """

    pid: int
    port: int
    started: str | None
    model: str
    command: tuple[str, ...]
    context: int
    alias: str

    @property
    def base_url(self) -> str:
        """The server's ``…/v1`` URL."""
        return f"http://{HOST}:{self.port}/v1"

    def to_json(self) -> dict[str, Any]:
        """Return the record as JSON-ready data (``vance model status --json``)."""
        return {"pid": self.pid, "port": self.port, "started": self.started,
                "model": self.model, "command": list(self.command), "context": self.context,
                "alias": self.alias, "base_url": self.base_url}


@frozen
class Wanted:
    """The server the settings ask for.

    Attributes:
        model: the GGUF file, absolute.
        command: the argv prefix that starts ``llama_cpp.server``.
        context: ``--n_ctx``.
        start_timeout: seconds a start may take.
    """

    model: str
    command: tuple[str, ...]
    context: int
    start_timeout: float

    @classmethod
    def from_settings(cls, settings: Settings) -> Wanted:
        """Read ``llm.local_model``, ``llm.local_command``, ``llm.local_context`` … from settings.

        Raises:
            LocalModelError: ``llm.local_model`` is not set, or the command cannot be split.
        """
        if not settings.llm_local_model:
            raise LocalModelError("no local model configured (set llm.local_model)")
        return cls(model=settings.llm_local_model,
                   command=command_of(settings.llm_local_command),
                   context=settings.llm_local_context,
                   start_timeout=settings.llm_local_start_timeout)

    def matches(self, server: Server) -> bool:
        """True when ``server`` was started for this model, command and context."""
        return (server.model, server.command, server.context) == \
            (self.model, self.command, self.context)


def command_of(text: str | None) -> tuple[str, ...]:
    """Return the argv prefix of ``llm.local_command`` (None: this interpreter's server).

    Raises:
        LocalModelError: the text cannot be split like a shell would, or is empty.
    """
    if not text:
        return (sys.executable, "-m", "llama_cpp.server")
    try:
        parts = tuple(shlex.split(text))
    except ValueError as exc:
        raise LocalModelError(f"llm.local_command cannot be read: {exc}") from None
    if not parts:
        raise LocalModelError("llm.local_command is empty")
    return parts


def state_dir(paths: Paths) -> Path:
    """Return ``<state>/local-model`` (not created)."""
    return paths.state_dir / "local-model"


def record_file(paths: Paths) -> Path:
    """Return the server's record, ``<state>/local-model/server.json``."""
    return state_dir(paths) / "server.json"


def log_file(paths: Paths) -> Path:
    """Return the server's log, ``<state>/local-model/server.log``."""
    return state_dir(paths) / "server.log"


def ensure_server(settings: Settings) -> Server:
    """Return a ready server for the configured model: the recorded one, else a new one.

    Raises:
        LocalModelError: the model file is missing or not a GGUF, the server package is
            missing, the server exited or was not ready within ``llm.local_start_timeout``,
            or another command held the lock too long.
    """
    wanted = Wanted.from_settings(settings)
    paths = settings.paths
    current = read_record(paths)
    if current is not None and _reusable(current, wanted):
        return current
    check_model_file(wanted.model)
    check_command(wanted.command)
    with _locked(paths, wanted.start_timeout + LOCK_MARGIN):
        current = read_record(paths)  # another command may have started it meanwhile
        if current is not None:
            if _reusable(current, wanted):
                return current
            _end(current)
            _forget(paths)
        server = _start(paths, wanted)
        atomic_write_text(record_file(paths), json.dumps(server.to_json(), indent=2) + "\n")
        return server


def stop_server(paths: Paths, lock_timeout: float = 60.0) -> tuple[Server | None, bool]:
    """Stop the recorded server and remove its record.

    Returns:
        ``(server, was_running)``: the server that was recorded (None when there was none),
        and whether its process still ran; a recorded server whose process is gone
        (killed, rebooted) has only its record removed.

    Raises:
        LocalModelError: another command held the lock for ``lock_timeout`` seconds.
    """
    with _locked(paths, lock_timeout):
        server = read_record(paths)
        if server is None:
            return None, False
        running = is_running(server)
        _end(server)
        _forget(paths)
        return server, running


def server_status(paths: Paths) -> tuple[Server | None, str]:
    """Return the recorded server and its state: ``running``, ``not answering``, ``gone``.

    ``running``: the process is the one started and its port takes connections.

    ``none`` when nothing is recorded. Reads only: a stale record stays until the next
    start or ``vance model stop``.
    """
    server = read_record(paths)
    if server is None:
        return None, "none"
    if not is_running(server):
        return server, "gone"
    return server, "running" if listening(server.port) else "not answering"


def _reusable(server: Server, wanted: Wanted) -> bool:
    return wanted.matches(server) and is_running(server) and listening(server.port)


def listening(port: int, timeout: float = 2.0) -> bool:
    """True when 127.0.0.1:``port`` takes a TCP connection (never waits for the model)."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def read_record(paths: Paths) -> Server | None:
    """Return the recorded server, or None when there is no readable record."""
    try:
        data = json.loads(record_file(paths).read_text(encoding="utf-8"))
        return Server(pid=int(data["pid"]), port=int(data["port"]),
                      started=data.get("started"), model=str(data["model"]),
                      command=tuple(str(p) for p in data["command"]),
                      context=int(data["context"]), alias=str(data["alias"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_model_file(model: str) -> None:
    """Raise unless ``model`` is a readable file that starts with the GGUF magic.

    Raises:
        LocalModelError: ``llm.local_model <path>: …`` — missing, a folder, unreadable,
            or not a GGUF file.
    """
    try:
        with open(model, "rb") as handle:
            head = handle.read(len(GGUF_MAGIC))
    except IsADirectoryError:
        raise LocalModelError(f"llm.local_model {model}: is a folder, not a GGUF file") from None
    except FileNotFoundError:
        raise LocalModelError(f"llm.local_model {model}: no such file") from None
    except OSError as exc:
        raise LocalModelError(f"llm.local_model {model}: cannot be read: "
                              f"{exc.strerror or exc}") from None
    if head != GGUF_MAGIC:
        raise LocalModelError(f"llm.local_model {model}: not a GGUF model file "
                              f"(it does not start with 'GGUF')")


def check_command(command: tuple[str, ...]) -> None:
    """Raise when the default command's interpreter lacks the server packages.

    A configured ``llm.local_command`` is not inspected: its failure shows when it exits.

    Raises:
        LocalModelError: ``the local model server needs the local extra: …``.
    """
    if command != command_of(None):
        return
    missing = [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise LocalModelError(
            f"the local model server needs the local extra ({', '.join(missing)} missing"
            f" in {sys.executable}): {EXTRA_HINT}, or set llm.local_command to a python"
            " that has llama_cpp")


def answers(port: int, timeout: float = 2.0) -> bool:
    """True when ``GET /v1/models`` on 127.0.0.1:``port`` answers 200."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("GET", "/v1/models")
        response = connection.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def is_running(server: Server) -> bool:
    """True when the recorded process still runs and is the one that was started.

    The start time from ``/proc`` tells a reused pid from the server; where there is no
    ``/proc`` the pid alone is trusted.
    """
    if server.pid <= 0:
        return False
    try:
        os.kill(server.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: not the server vance started
        return False
    stat = _proc_stat(server.pid)
    if stat is None:
        return True
    state, started = stat
    return state != "Z" and (server.started is None or started == server.started)


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """Return the process's state letter and start time (``/proc/<pid>/stat``), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], fields[19]  # state (field 3), starttime (field 22)


@contextlib.contextmanager
def _locked(paths: Paths, timeout: float) -> Iterator[None]:
    import filelock

    lock = ensure(state_dir(paths)) / "server.lock"
    try:
        with filelock.FileLock(str(lock), timeout=timeout):
            yield
    except filelock.Timeout:
        raise LocalModelError(f"another vance command holds {lock}; gave up after"
                              f" {timeout:g} s") from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


_STARTED: list[subprocess.Popen[bytes]] = []
"""Servers started by this process, kept referenced: a collected Popen of a running
process warns; the server outlives the command by design."""


def server_argv(wanted: Wanted, port: int) -> list[str]:
    """Return the server's argv: the command, then the model, address and options."""
    return [*wanted.command, "--model", wanted.model, "--model_alias", Path(wanted.model).stem,
            "--host", HOST, "--port", str(port), "--n_ctx", str(wanted.context),
            "--interrupt_requests", "False"]


def _start(paths: Paths, wanted: Wanted) -> Server:
    port = _free_port()
    log = log_file(paths)
    with open(log, "wb") as out:  # one start's output: the last line explains a failure
        try:
            proc = subprocess.Popen(server_argv(wanted, port), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, close_fds=True)
        except OSError as exc:
            raise LocalModelError(f"the local model server cannot be started ("
                                  f"{shlex.join(wanted.command)}): {exc.strerror or exc}"
                                  ) from None
    _STARTED.append(proc)
    stat = _proc_stat(proc.pid)
    server = Server(pid=proc.pid, port=port, started=stat[1] if stat else None,
                    model=wanted.model, command=wanted.command, context=wanted.context,
                    alias=Path(wanted.model).stem)
    try:
        _wait_ready(proc, server, wanted.start_timeout, log)
    except BaseException:  # not ready, Ctrl-C, a stop: no server is left without a record
        _end(server)
        raise
    return server


def _wait_ready(proc: subprocess.Popen[bytes], server: Server, timeout: float,
                log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not answers(server.port, timeout=min(2.0, timeout)):
        code = proc.poll()
        if code is not None:
            raise LocalModelError(f"the local model server exited (code {code}) before it was"
                                  f" ready: {_last_line(log)}{_hint(log)} (log: {log})")
        if time.monotonic() >= deadline:
            raise LocalModelError(f"the local model server was not ready within"
                                  f" {timeout:g} s (llm.local_start_timeout);"
                                  f" stopped it (log: {log})", timeout=True)
        time.sleep(POLL)


def _last_line(log: Path) -> str:
    try:
        lines = [line.strip() for line in
                 log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(no output)"


def _hint(log: Path) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if "No module named" in text:
        return f" — {EXTRA_HINT}, or set llm.local_command to a python that has llama_cpp"
    return ""


def _end(server: Server) -> None:
    """Stop the server's process group (SIGTERM, then SIGKILL) if it is still the server."""
    if not is_running(server):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    while is_running(server) and time.monotonic() < deadline:
        _reap(server.pid)
        time.sleep(POLL)
    if is_running(server):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(server.pid, signal.SIGKILL)
    _reap(server.pid)


def _reap(pid: int) -> None:
    """Collect the exit of a server this process started (no zombie stays behind)."""
    for proc in list(_STARTED):
        if proc.pid == pid and proc.poll() is not None:
            _STARTED.remove(proc)


def _forget(paths: Paths) -> None:
    with contextlib.suppress(FileNotFoundError):
        record_file(paths).unlink()
