"""The guard of one LLM call: a wall-clock deadline on a timer and a cap on the reply's bytes.

Rules (docs/configuration.md "Deadlines and caps"):
- Every attempt of a call has a wall-clock deadline of ``llm.timeout``
  seconds from the moment it is sent; the call as a whole may also have a
  caller's deadline (the turn's end). The HTTP client's own timeouts are
  per read: a server that trickles one byte every few seconds, or sends
  only keep-alive lines, would never trip them. A timer thread does: when a
  deadline passes it shuts the attempt's socket down, which ends a blocked
  read at once, and the call fails as ``GuardTripped``.
- A tripped call is never retried (``GuardTripped`` is an ``OpenAIError``,
  which the client passes on as it is): the time is spent. A silent server
  (no byte at all) still times out per read and is retried as before.
- The raw body of a reply, streamed or not, is counted as it arrives; past
  ``max_body`` bytes the read stops with ``ReplyTooLarge``, so memory stays
  bounded whatever the server sends.
- Attempts are counted as they are sent (``attempts``), so a message says
  how many ran, not how many were allowed.
- This module imports ``openai`` and its HTTP library at its top: ``llm``
  imports it inside ``complete()`` only.
"""

from __future__ import annotations

import contextvars
import importlib
import importlib.util
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import openai

httpx: Any = importlib.import_module(  # the HTTP library this openai release is built on
    "httpx2" if importlib.util.find_spec("httpx2") else "httpx")


class GuardTripped(openai.OpenAIError):
    """A deadline of the call passed (``which``: ``attempt`` or ``call``)."""

    def __init__(self, which: str) -> None:
        super().__init__(f"the {which} deadline passed")
        self.which = which


class ReplyTooLarge(openai.OpenAIError):
    """The reply's body grew past the cap (``limit`` bytes)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit} bytes")
        self.limit = limit


_CURRENT: contextvars.ContextVar[CallGuard | None] = contextvars.ContextVar(
    "vance_llm_guard", default=None)


class CallGuard:
    """Deadlines and the byte cap of one call; use as a context manager around it.

    Args:
        attempt_seconds: wall-clock seconds each attempt may take (``llm.timeout``).
        deadline: ``time.monotonic()`` by which the whole call must end, or None.
        max_body: most bytes of one reply's raw body.
    """

    def __init__(self, attempt_seconds: float, deadline: float | None, max_body: int) -> None:
        self.attempt_seconds = attempt_seconds
        self.deadline = deadline
        self.max_body = max_body
        self.attempts = 0
        self.tripped: str | None = None
        """Which deadline passed (``attempt``, ``call``), or None."""
        self._attempt_ends = float("inf")
        self._socket: socket.socket | None = None
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()
        self._token: contextvars.Token[CallGuard | None] | None = None

    def __enter__(self) -> CallGuard:
        self._token = _CURRENT.set(self)
        if self.deadline is not None:
            self._arm(self.deadline, "call")
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            timers, self._timers, self._socket = self._timers, [], None
        for timer in timers:
            timer.cancel()
        if self._token is not None:
            _CURRENT.reset(self._token)

    @property
    def ends(self) -> float:
        """When the attempt under way must end (``time.monotonic()``)."""
        return min(self._attempt_ends, self.deadline if self.deadline is not None
                   else float("inf"))

    def begin_attempt(self) -> None:
        """An attempt is sent: count it and arm its deadline.

        Raises:
            GuardTripped: the call's deadline already passed (no new attempt).
        """
        if self.tripped == "call" or (self.deadline is not None
                                      and time.monotonic() >= self.deadline):
            self.tripped = "call"
            raise GuardTripped("call")
        self.attempts += 1
        self.tripped = None
        self._attempt_ends = time.monotonic() + self.attempt_seconds
        self._arm(self._attempt_ends, "attempt")

    def watch(self, response: Any) -> None:
        """Watch a response whose headers arrived: its socket is shut when a deadline passes.

        Raises:
            GuardTripped: a deadline passed while the headers were awaited.
        """
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._socket = sock if isinstance(sock, socket.socket) else None
        self.check()

    def check(self) -> None:
        """Raise when a deadline has passed (the reader calls it at each chunk).

        Raises:
            GuardTripped: it has.
        """
        if self.tripped is None and time.monotonic() >= self.ends:
            self.tripped = "call" if self.deadline is not None and \
                time.monotonic() >= self.deadline else "attempt"
        if self.tripped is not None:
            raise GuardTripped(self.tripped)

    def _arm(self, at: float, which: str) -> None:
        timer = threading.Timer(max(0.0, at - time.monotonic()), self._fire, (which, at))
        timer.daemon = True
        with self._lock:
            self._timers.append(timer)
        timer.start()

    def _fire(self, which: str, at: float) -> None:
        with self._lock:
            if which == "attempt" and at != self._attempt_ends:
                return  # an earlier attempt's timer: that attempt is over
            self.tripped = self.tripped or which
            sock = self._socket
        if sock is not None:
            try:  # ends a read blocked in another thread at once (close would not)
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def current() -> CallGuard | None:
    """Return the guard of the call under way in this context, or None."""
    return _CURRENT.get()


class _CountedBody(httpx.SyncByteStream):  # type: ignore[misc]
    """A response body that counts its bytes and stops at the cap or a deadline."""

    def __init__(self, inner: Any, guard: CallGuard) -> None:
        self._inner = inner
        self._guard = guard
        self.received = 0

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                self.received += len(chunk)
                if self.received > self._guard.max_body:
                    raise ReplyTooLarge(self._guard.max_body)
                self._guard.check()
                yield chunk
        except (GuardTripped, ReplyTooLarge):
            raise
        except Exception:
            if self._guard.tripped is not None:  # the timer shut the socket down
                raise GuardTripped(self._guard.tripped) from None
            raise
        self._guard.check()

    def close(self) -> None:
        """Close the inner body."""
        self._inner.close()


class GuardedHttpClient(openai.DefaultHttpxClient):
    """The client's HTTP client: every request runs under the current ``CallGuard``."""

    def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
        """Send under the guard: count the attempt, watch the socket, count the body.

        Raises:
            GuardTripped: a deadline passed. ReplyTooLarge: the body passed the cap.
        """
        guard = current()
        if guard is None:
            return super().send(request, stream=stream, **kwargs)
        guard.begin_attempt()
        response = super().send(request, stream=True, **kwargs)
        try:
            guard.watch(response)
            response.stream = _CountedBody(response.stream, guard)
            if not stream:
                response.read()
        except BaseException:
            response.close()
            raise
        return response
