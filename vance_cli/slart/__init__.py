"""Slartibartfast: the engine that writes a new recipe when no existing one fits.

DESIGN.md §6; README "Delegate" (Slartibartfast fallback). Modules:

- ``fallback``: the runner ``vance delegate`` calls for a NONE that means
  "nothing fits" (``Fallback``), its result (``FallbackResult``,
  ``Outcome``), and the sync flow (run under a cutoff, then spawn).
- ``launch``: the async flow — a detached background worker
  (``python -m vance_cli.slart``) and its body.
- ``engine``: one run on one Slart process — prompt, ask, check, repair,
  store, close — and the supervisor that enforces the cutoff.
- ``prompt``: the ``prompts/slartibartfast.md`` template (cascade, sandbox).
- ``extract``: the recipe out of a real model's reply (fences, prose, JSON,
  ``<think>``).
- ``validate``: the checks a generated recipe must pass.
- ``audit``: ``recipes/_slart/<runId>/audit.json``, rewritten at each step.

Nothing here imports ``openai`` or ``jinja2`` at module level: they load
only when Slartibartfast really runs.
"""

from __future__ import annotations

from vance_cli.slart.fallback import Fallback, FallbackResult, Outcome

__all__ = ["Fallback", "FallbackResult", "Outcome"]
