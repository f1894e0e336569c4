"""What one turn of a process may spend (docs/processes.md "Budgets").

Rules:
- A budget comes from the settings (``turn.max_llm_calls``, ``process.max_tokens``,
  ``turn.timeout``), overridden by the process's ``params.budget``
  (``llmCalls``, ``tokens``, ``turnSeconds``); values that are not positive
  numbers are ignored.
- A recipe's ``params.budget`` cannot exceed the ceilings in config
  (``CEILINGS``: ``budget.max_llm_calls``, ``budget.max_tokens``,
  ``budget.max_turn_seconds``); ``over_ceiling`` names the one it breaks, and
  a process is not created with it (bundled or generated recipe alike).
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
        """Return the budget: the settings, overridden by ``params.budget`` up to the ceilings."""
        given = params.get("budget")
        given = given if isinstance(given, Mapping) else {}

        def number(key: str, default: float, ceiling: float) -> float:
            value = given.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                return float(min(value, ceiling))  # a process made before a lower ceiling
            return default

        return cls(llm_calls=int(number("llmCalls", settings.turn_max_llm_calls,
                                        settings.budget_max_llm_calls)),
                   tokens=int(number("tokens", settings.process_max_tokens,
                                     settings.budget_max_tokens)),
                   seconds=number("turnSeconds", settings.turn_timeout,
                                  settings.budget_max_turn_seconds))


CEILINGS = (("llmCalls", "budget.max_llm_calls"), ("tokens", "budget.max_tokens"),
            ("turnSeconds", "budget.max_turn_seconds"))
"""Each ``params.budget`` key and the setting that is its ceiling."""


def over_ceiling(settings: Settings, params: Mapping[str, Any]) -> list[str]:
    """Return one problem per ``params.budget`` value over its ceiling (empty: none).

    Each names the value, the key and the setting, e.g. ``params.budget.turnSeconds
    100000000 is over the ceiling of 3600 (budget.max_turn_seconds)``.
    """
    given = params.get("budget")
    if not isinstance(given, Mapping):
        return []
    problems = []
    for key, setting in CEILINGS:
        value = given.get(key)
        ceiling = settings.get(setting)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > ceiling:
            problems.append(f"params.budget.{key} {value:g} is over the ceiling of {ceiling:g}"
                            f" ({setting})")
    return problems
