"""Running a program with limits: bubblewrap where it works, resource limits always.

Rule (docs/tools.md#run_python-and-run_command): every run gets ``RLIMIT_CPU``, ``RLIMIT_AS``
(memory), ``RLIMIT_FSIZE`` and no core files (``LIMITER`` sets them, then becomes the program),
its own session (the whole group is killed at the wall-time limit), a minimal environment (no
API keys) and capped output. Where ``bwrap`` runs, the program also sees the file system
read-only except its writable folders, the deny floor hidden (empty folders over ``~/.ssh``,
``~/.aws``, vance's folders), and no network (``--unshare-all``). Without ``bwrap``,
``unshare --net`` cuts the network where the kernel lets it; else the network stays open and
``Ran.sandbox`` says so.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from vance_cli.base.records import frozen
from vance_cli.tools.floor import HOME_FLOOR, is_env_file
from vance_cli.tools.tool import ToolContext

BWRAP = "bubblewrap"
UNSHARE = "unshare (no network) + resource limits"
RLIMITS = "resource limits only (network open)"
"""Values of ``Ran.sandbox``: which sandbox ran."""

FILE_SIZE_MAX = 64 * 2**20
"""Largest file a sandboxed program may write (``RLIMIT_FSIZE``), its captured output included."""

PROBE_SECONDS = 10.0
"""How long the probe of ``bwrap`` or ``unshare`` may take."""


@frozen
class Limits:
    """What one run may use.

    Attributes:
        wall_seconds: wall time, from start to kill.
        cpu_seconds: CPU time (``RLIMIT_CPU``).
        memory_mb: address space in MiB (``RLIMIT_AS``); 0: no limit.
        output_bytes: bytes of stdout and of stderr kept each.
    """

    wall_seconds: float = 30.0
    cpu_seconds: float = 30.0
    memory_mb: int = 1024
    output_bytes: int = 20_000

    @classmethod
    def of(cls, context: ToolContext, output_bytes: int = 20_000) -> Limits:
        """Return the limits of the context's ``tools.python.*`` options and its deadline."""
        seconds = float(context.options.get("tools.python.timeout", 30.0))
        if context.deadline is not None:
            seconds = max(0.1, min(seconds, context.deadline - time.monotonic()))
        return cls(wall_seconds=seconds, cpu_seconds=seconds,
                   memory_mb=int(context.options.get("tools.python.memory_mb", 1024)),
                   output_bytes=output_bytes)


@frozen
class Ran:
    """How a run ended.

    Attributes:
        exit: the exit status (negative: killed by that signal), None when stopped.
        stdout: the first ``output_bytes`` of its standard output, decoded.
        stderr: the same of its standard error.
        truncated: True when either output was cut.
        stopped: why vance or the kernel stopped it (``wall time``, ``CPU time``,
            ``memory``, ``file size``), or None.
        sandbox: which sandbox ran (``BWRAP``, ``UNSHARE``, ``RLIMITS``).
        seconds: wall time taken.
    """

    exit: int | None
    stdout: str
    stderr: str
    truncated: bool
    stopped: str | None
    sandbox: str
    seconds: float


def _works(argv: Sequence[str]) -> bool:
    try:
        done = subprocess.run([*argv, "true"], capture_output=True, timeout=PROBE_SECONDS,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@cache
def bwrap_path() -> str | None:
    """Return the ``bwrap`` program when it runs a sandbox here (user namespaces allowed)."""
    path = shutil.which("bwrap")
    if path and _works([path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                        "--dev", "/dev", "--proc", "/proc", "--"]):
        return path
    return None


@cache
def unshare_path() -> str | None:
    """Return ``unshare`` when it can give a program a network namespace of its own here."""
    path = shutil.which("unshare")
    if path and _works([path, "--net", "--map-root-user", "--"]):
        return path
    return None


def sandbox_name() -> str:
    """Return which sandbox a run gets on this machine (``BWRAP``, ``UNSHARE`` or ``RLIMITS``)."""
    return BWRAP if bwrap_path() else UNSHARE if unshare_path() else RLIMITS


def _hidden(context: ToolContext) -> list[Path]:
    """Folders and files on the deny floor that exist, to hide inside the sandbox."""
    found = [context.home / entry for entry in HOME_FLOOR]
    found += [d for d in (context.state_dir, context.config_dir) if d is not None]
    try:
        found += [p for p in context.project.iterdir() if is_env_file(p.name)]
    except OSError:
        pass
    return [p for p in found if p.exists()]


def _bwrap_argv(bwrap: str, context: ToolContext, workdir: Path,
                writable: Sequence[Path]) -> list[str]:
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for prefix in dict.fromkeys(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)):
        if Path(prefix).is_relative_to("/tmp"):  # this Python (a venv) under the hidden /tmp
            argv += ["--ro-bind", prefix, prefix]
    for folder in dict.fromkeys([workdir, *writable]):
        argv += ["--bind", str(folder), str(folder)]
    for path in _hidden(context):
        argv += (["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)])
    return [*argv, "--chdir", str(workdir), "--"]


LIMITER = (
    "import os, resource, sys\n"
    "cpu, memory, size = (int(v) for v in sys.argv[1:4])\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))\n"
    "if memory:\n"
    "    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "os.execvp(sys.argv[4], sys.argv[4:])\n"
)
"""Sets the limits, then becomes the program: a ``preexec_fn`` could deadlock in a process
with threads (a worker's heartbeat), a separate short-lived Python cannot."""


def _limited(argv: Sequence[str], limits: Limits) -> list[str]:
    """Return ``argv`` behind ``LIMITER`` with the limits of ``limits``."""
    cpu = max(1, int(limits.cpu_seconds + 0.999))
    memory = limits.memory_mb * 2**20
    return [sys.executable, "-I", "-S", "-c", LIMITER, str(cpu), str(memory),
            str(FILE_SIZE_MAX), *argv]


def environment_path() -> str:
    """Return the ``PATH`` a sandboxed program gets: vance's own."""
    return os.environ.get("PATH") or os.defpath


def _environment(workdir: Path) -> dict[str, str]:
    keep = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TZ") if k in os.environ}
    return {**keep, "PATH": environment_path(), "HOME": str(workdir), "TMPDIR": "/tmp",
            "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1"}


def _read(path: Path, cap: int) -> tuple[str, bool]:
    with path.open("rb") as handle:
        data = handle.read(cap + 1)
    return data[:cap].decode("utf-8", errors="replace"), len(data) > cap


def _why_stopped(status: int, stderr: str, killed: bool, sandbox: str) -> str | None:
    if killed:
        return "wall time"
    # a signal: negative status directly; through bwrap, 128 + the signal
    sig = -status if status < 0 else status - 128 if sandbox == BWRAP and status > 128 else 0
    if sig in (signal.SIGXCPU, signal.SIGKILL):
        return "CPU time"
    if sig == signal.SIGXFSZ or "File too large" in stderr:  # Python ignores SIGXFSZ
        return "file size"
    if "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        return "memory"
    return None


def run_limited(argv: Sequence[str], context: ToolContext, limits: Limits, workdir: Path,
                writable: Sequence[Path] = ()) -> Ran:
    """Run ``argv`` in ``workdir`` within ``limits``, in the best sandbox this machine has.

    Args:
        argv: the program and its arguments (no shell).
        context: the call's context (its floor is hidden in the sandbox).
        limits: wall time, CPU time, memory, output.
        workdir: the working folder (writable).
        writable: more folders the program may write (bubblewrap only binds these).

    Raises:
        OSError: the program could not be started.
    """
    sandbox = sandbox_name()
    bwrap, unshare = bwrap_path(), unshare_path()
    if bwrap:
        full = [*_bwrap_argv(bwrap, context, workdir, writable), *argv]
    elif unshare:
        full = [unshare, "--net", "--map-root-user", "--", *argv]
    else:
        full = list(argv)
    with tempfile.TemporaryDirectory(prefix="vance-out-") as out:
        stdout_path, stderr_path = Path(out) / "stdout", Path(out) / "stderr"
        start = time.monotonic()
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            child = subprocess.Popen(
                _limited(full, limits), cwd=workdir, env=_environment(workdir),
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True)
            killed = False
            try:
                status = child.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                killed = True
            finally:
                # the whole session: what the program started goes too
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                status = child.wait()
        seconds = time.monotonic() - start
        out_text, out_cut = _read(stdout_path, limits.output_bytes)
        err_text, err_cut = _read(stderr_path, limits.output_bytes)
    return Ran(exit=None if killed else status, stdout=out_text, stderr=err_text,
               truncated=out_cut or err_cut, sandbox=sandbox, seconds=round(seconds, 3),
               stopped=_why_stopped(status, err_text, killed, sandbox))


def report(ran: Ran, limits: Limits) -> str:
    """Return a run as the model reads it: its output, and how it ended when not plainly."""
    parts = []
    if ran.stdout:
        parts.append(ran.stdout)
    if ran.stderr:
        parts.append(f"[stderr]\n{ran.stderr}")
    if ran.truncated:
        parts.append(f"[output cut at {limits.output_bytes} bytes]")
    if ran.stopped:
        limit = {"wall time": f"{limits.wall_seconds:g} s", "CPU time": f"{limits.cpu_seconds:g} s",
                 "memory": f"{limits.memory_mb} MiB", "file size": f"{FILE_SIZE_MAX} bytes"}
        parts.append(f"[stopped: it reached the {ran.stopped} limit of {limit[ran.stopped]}]")
    elif ran.exit:
        parts.append(f"[exit status {ran.exit}]")
    if not (ran.stdout or ran.stderr):
        parts.insert(0, "(no output)")
    return "\n".join(parts)
