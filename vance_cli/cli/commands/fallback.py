"""The fallback flags of ``vance delegate`` and how a fallback outcome is shown to people.

Kept apart from ``cli/delegate.py`` so the delegate command stays a thin
parser: ``check_flags`` rejects contradictory flags (exit 2),
``fallback_pairs`` turns the ``fallback`` object into ``label: value``
lines for ``output.fields``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from vance_cli.base.config import FALLBACK_TIMEOUT_MAX, check_seconds
from vance_cli.cli import output

if TYPE_CHECKING:
    from vance_cli.delegate.flow import DelegateResult
    from vance_cli.delegate.request import DelegateRequest
    from vance_cli.engines.slartibartfast.outcome import FallbackResult
    from vance_cli.selector.decision import Decision
    from vance_cli.workspace import Workspace

SPINNER_TEXT = "Slartibartfast is designing a new recipe…"
"""Shown on stderr (terminal only) while a sync fallback runs."""

NO_LLM_HINT = ("vance config set llm.base_url http://localhost:11434/v1 (your endpoint; or set "
               "VANCE_LLM_BASE_URL; 'vance config show' lists every setting); "
               "--no-fallback skips this step")
"""How to enable the fallback, shown when no LLM is configured."""


def check_flags(no_fallback: bool, async_fallback: bool, timeout: float | None) -> None:
    """Reject contradictory fallback flags and a timeout out of range.

    Raises:
        typer.BadParameter: ``--no-fallback`` together with ``--async-fallback`` or
            ``--fallback-timeout``, or a timeout out of range (a usage error: exit 2,
            code ``usage_error``).
    """
    if no_fallback and async_fallback:
        raise typer.BadParameter("excludes --no-fallback", param_hint="--async-fallback")
    if no_fallback and timeout is not None:
        raise typer.BadParameter("has no effect with --no-fallback",
                                 param_hint="--fallback-timeout")
    if timeout is not None:
        try:
            check_seconds(timeout, FALLBACK_TIMEOUT_MAX)  # the rule of fallback.timeout
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--fallback-timeout") from None


class Runner:
    """The fallback runner of the command line: Slartibartfast with the terminal's spinner.

    The engine is imported when a NONE calls for it, not before: most
    delegates never fall back, and the engine's modules cost start-up time.

    Args:
        background: ``--async-fallback``: a detached worker instead of waiting.
        timeout: the cutoff in seconds, checked by ``check_flags``; None → config
            ``fallback.timeout``.
    """

    def __init__(self, background: bool, timeout: float | None) -> None:
        self.background = background
        self.timeout = timeout

    def __call__(self, ws: Workspace, request: DelegateRequest,
                 decision: Decision) -> FallbackResult:
        """Run Slartibartfast for the NONE (``FallbackRunner``)."""
        from vance_cli.engines.slartibartfast.fallback import Fallback  # deferred: a NONE

        runner = Fallback(self.background, self.timeout,
                          progress=lambda: output.status(SPINNER_TEXT))
        return runner(ws, request, decision)


def make_runner(enabled: bool, background: bool, timeout: float | None) -> Runner | None:
    """Build the Slartibartfast fallback runner the flags ask for (None when it is off).

    Args:
        enabled: False with ``--no-fallback``.
        background: ``--async-fallback``: a detached worker instead of waiting.
        timeout: the cutoff in seconds; None → config ``fallback.timeout``.

    Raises:
        InputError: a bad ``timeout``.
    """
    return Runner(background, timeout) if enabled else None


def fallback_pairs(result: DelegateResult) -> list[tuple[str, Any]]:
    """Return the lines that show the fallback outcome to people (may be empty)."""
    fallback = result.fallback
    if fallback is None:
        reason = result.decision.reason
        if result.dry_run and reason is not None and reason.fallback_eligible:
            return [("fallback", "not run (dry run)")]
        return []
    from vance_cli.engines.slartibartfast.fallback import NO_LLM  # deferred: it is loaded
    from vance_cli.engines.slartibartfast.outcome import (  # deferred: it is loaded
        FallbackResult,
        Outcome,
    )

    data = fallback.to_json()
    if not isinstance(fallback, FallbackResult):  # another runner: its JSON only
        return [("fallback", f"{data.get('outcome')}: {data.get('rationale', '')}")]
    if fallback.code == NO_LLM:
        return [("fallback", "no new recipe: no LLM is configured, and Slartibartfast needs "
                             "one to design a recipe"), ("to enable it", NO_LLM_HINT)]
    pairs: list[tuple[str, Any]] = [("fallback", f"{data['outcome']}: {data['rationale']}")]
    if fallback.recipe_name:
        where = fallback.file or data["recipePath"]
        pairs.append(("new recipe", f"{fallback.recipe_name} ({where})"))
    if fallback.outcome is Outcome.PENDING and fallback.slart_process_id:
        pairs.append(("follow it", f"vance process wait {fallback.slart_process_id}; "
                                   f"vance process events --for {fallback.notify}"))
    elif fallback.outcome is not Outcome.GENERATED and fallback.audit_file:
        pairs.append(("audit", str(fallback.audit_file)))
    return pairs
