"""What one turn of a process may spend (docs/processes.md "Budgets").

Rules:
- A budget comes from the settings (``turn.max_llm_calls``, ``process.max_tokens``,
  ``turn.timeout``), overridden by the process's ``params.budget``
  (``llmCalls``, ``tokens``, ``turnSeconds``); values that are not positive
  numbers are ignored.
- A turn's seconds are one wall-clock deadline: every LLM call of the turn
  ends by it (``llm.complete(deadline=…)``), and a turn still RUNNING
  ``REAP_GRACE`` past it is reaped (``lifecycle.reap_stale``) even while its
  worker beats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vance_cli.base.records import frozen

if TYPE_CHECKING:
    from vance_cli.base.config import Settings

REAP_GRACE = 5.0
"""Seconds a turn may stay RUNNING past its deadline before it is reaped: its worker's own
deadline ends it within a second; the rest is for the worker to settle it."""


@frozen
class Budget:
    """What one turn of a process may spend.

    Attributes:
        llm_calls: LLM calls per turn.
        tokens: LLM tokens (in + out) over all the process's turns.
        seconds: wall-clock seconds per turn.
    """

    llm_calls: int
    tokens: int
    seconds: float

    @classmethod
    def of(cls, settings: Settings, params: Mapping[str, Any]) -> Budget:
        """Return the budget: the settings, overridden by the process's ``params.budget``."""
        given = params.get("budget")
        given = given if isinstance(given, Mapping) else {}

        def number(key: str, default: float) -> float:
            value = given.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                return float(value)
            return default

        return cls(llm_calls=int(number("llmCalls", settings.turn_max_llm_calls)),
                   tokens=int(number("tokens", settings.process_max_tokens)),
                   seconds=number("turnSeconds", settings.turn_timeout))
