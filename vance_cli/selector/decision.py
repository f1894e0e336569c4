"""The selector's answer: ``Decision``, its ``NoneReason`` codes, and the failure mapping.

Rules (docs/delegate.md):
- A decision is ``MATCH`` (with a recipe from the inventory) or ``NONE``
  (with a rationale and a machine-readable ``reason``).
- Every failure becomes ``NONE``, never an exception: ``none_for`` is the one
  function that maps a failure to its reason code and rationale.
- A ``NONE`` is a candidate for the Slartibartfast fallback only when it
  means "nothing fits" (``NoneReason.fallback_eligible``); when the LLM itself
  failed, a second call to the same endpoint would fail too.
"""

from __future__ import annotations

from dataclasses import field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vance_cli.base.errors import LLMError, VanceError
from vance_cli.base.records import frozen

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe

MATCH = "MATCH"
"""``decision`` value: a recipe fits."""
NONE = "NONE"
"""``decision`` value: no recipe (see ``reason``)."""

LLM_FAILED = "LLM call failed: "
"""Rationale prefix when the LLM call raised (docs/delegate.md table)."""


class NoneReason(StrEnum):
    """Why the selector answered ``NONE`` (the ``reason`` field; docs/delegate.md lists them)."""

    EMPTY_TASK = "empty_task"
    """The task is empty or shows nothing (white space, zero-width characters:
    ``text_input.is_blank``); no LLM call."""
    NO_RECIPES = "no_recipes"
    """The inventory is empty; no LLM call."""
    LLM_ERROR = "llm_error"
    """The LLM call failed: network, HTTP error status, authentication, no model."""
    TIMEOUT = "timeout"
    """The LLM call timed out (after its retries)."""
    NO_JSON = "no_json"
    """The reply is empty or holds no JSON object."""
    JSON_ERROR = "json_error"
    """The reply holds a malformed JSON object (e.g. cut off in the middle)."""
    TRUNCATED = "truncated"
    """The reply hit the token limit (``finish_reason == "length"``)."""
    INVALID_DECISION = "invalid_decision"
    """``decision`` is not MATCH/NONE, MATCH has no recipe, or the recipe is not a name."""
    AMBIGUOUS = "ambiguous_reply"
    """The reply holds several answer objects that disagree."""
    UNKNOWN_RECIPE = "unknown_recipe"
    """The LLM named a recipe that is not in the inventory."""
    LLM_NONE = "llm_none"
    """The LLM answered NONE itself; the rationale is its own."""
    OFFLINE_NO_MATCH = "offline_no_match"
    """Offline selector: no recipe reached the relevance threshold."""
    SELECTOR_ERROR = "selector_error"
    """The selector could not run: broken prompt template or catalog, or a bug."""

    @property
    def llm_failed(self) -> bool:
        """True when the LLM call itself failed (``llm_error``, ``timeout``).

        The command then exits 1, so a script tells "server down" from
        "nothing fits" (docs/exit-codes.md).
        """
        return self in (NoneReason.LLM_ERROR, NoneReason.TIMEOUT)

    @property
    def fallback_eligible(self) -> bool:
        """True when the NONE means "nothing fits", so Slartibartfast may design a recipe.

        Rule: docs/delegate.md step 7.
        """
        return self in _FALLBACK_ELIGIBLE

    @property
    def no_fallback_note(self) -> str | None:
        """Why this NONE gets no Slartibartfast fallback, or None (eligible, or empty task).

        Appended to the rationale shown when the fallback is on, so the
        output says why nothing was designed (docs/delegate.md step 7).
        """
        if self.fallback_eligible or self is NoneReason.EMPTY_TASK:
            return None
        if self in (NoneReason.LLM_ERROR, NoneReason.TIMEOUT):
            return ("no Slartibartfast fallback: the LLM call failed, and Slartibartfast "
                    "would call the same endpoint")
        if self is NoneReason.SELECTOR_ERROR:
            return "no Slartibartfast fallback: the selector could not run"
        return ("no Slartibartfast fallback: the selector's reply was unusable, so it is not "
                "known that no recipe fits; try again")


_FALLBACK_ELIGIBLE = frozenset({
    NoneReason.NO_RECIPES, NoneReason.UNKNOWN_RECIPE, NoneReason.LLM_NONE,
    NoneReason.OFFLINE_NO_MATCH,
})


class Mode(StrEnum):
    """How the decision was reached (the decision log's ``mode``)."""

    PRECHECK = "precheck"
    """Decided before any ranking or LLM call (empty task, empty inventory)."""
    NAMED = "named"
    """The task names exactly one recipe of the inventory as a recipe ("with the recipe 'x'")."""
    TRIGGER = "trigger"
    """Exactly one recipe's trigger keyword occurs in the task."""
    LLM = "llm"
    """One LLM call over the catalog and inventory."""
    OFFLINE = "offline"
    """No LLM configured: lexical ranking with a threshold."""


class SelectorFailure(Exception):
    """A selector step that ends in NONE; carries the reason and the rationale.

    Args:
        reason: the NONE reason code.
        rationale: the full rationale (starting as docs/delegate.md's table says).
    """

    def __init__(self, reason: NoneReason, rationale: str) -> None:
        super().__init__(rationale)
        self.reason = reason
        self.rationale = rationale


@frozen
class Trace:
    """What the decision log keeps about how a decision was made (never the API key).

    Attributes:
        model: model asked (or that answered).
        endpoint: base URL without credentials.
        json_mode: structured-output mode sent.
        raw_reply: the LLM's reply text, unchanged.
        finish_reason: as the server reported it.
        prompt_tokens: input tokens, when reported.
        completion_tokens: output tokens, when reported.
        latency_ms: wall time of the whole selection, milliseconds.
    """

    model: str | None = None
    endpoint: str | None = None
    json_mode: str | None = None
    raw_reply: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None


@frozen
class Decision:
    """The selector's answer for one task.

    Attributes:
        decision: ``MATCH`` or ``NONE``.
        recipe: the chosen recipe (MATCH only).
        rationale: why, one or a few sentences.
        reason: the NONE reason code (None for MATCH).
        mode: how it was decided.
        trace: details for the decision log.
    """

    decision: str
    recipe: Recipe | None
    rationale: str
    reason: NoneReason | None
    mode: Mode
    trace: Trace = field(default_factory=Trace)

    @property
    def matched(self) -> bool:
        """True for a MATCH."""
        return self.decision == MATCH

    @property
    def engine(self) -> str | None:
        """The chosen recipe's engine, or None."""
        return self.recipe.engine if self.recipe else None

    def with_trace(self, **changes: Any) -> Decision:
        """Return a copy whose trace has ``changes`` applied."""
        return replace(self, trace=replace(self.trace, **changes))

    def to_json(self) -> dict[str, Any]:
        """Return ``{"decision", "recipe", "engine", "rationale", "reason"}`` (docs/delegate.md)."""
        return {
            "decision": self.decision,
            "recipe": self.recipe.name if self.recipe else None,
            "engine": self.engine,
            "rationale": self.rationale,
            "reason": self.reason.value if self.reason else None,
        }


def match(recipe: Recipe, rationale: str, mode: Mode, trace: Trace | None = None) -> Decision:
    """Build a MATCH decision."""
    return Decision(MATCH, recipe, rationale, None, mode, trace or Trace())


def none(reason: NoneReason, rationale: str, mode: Mode, trace: Trace | None = None) -> Decision:
    """Build a NONE decision."""
    return Decision(NONE, None, rationale, reason, mode, trace or Trace())


def none_for(failure: BaseException) -> tuple[NoneReason, str]:
    """Map any failure inside the selector to its NONE reason and rationale.

    The one place where failures become reason codes (docs/delegate.md step 5):
    ``SelectorFailure`` carries its own; an ``LLMError`` is ``timeout`` or
    ``llm_error`` with ``LLM call failed: <message>``; any other vance error
    (a broken prompt template or catalog) and any unexpected exception is
    ``selector_error``.

    Args:
        failure: the exception raised by a selector step.

    Returns:
        ``(reason, rationale)``.
    """
    if isinstance(failure, SelectorFailure):
        return failure.reason, failure.rationale
    if isinstance(failure, LLMError):
        reason = NoneReason.TIMEOUT if failure.timeout else NoneReason.LLM_ERROR
        return reason, LLM_FAILED + failure.message
    if isinstance(failure, VanceError):
        return NoneReason.SELECTOR_ERROR, f"selector cannot run: {failure.message}"
    text = " ".join(str(failure).split())
    return NoneReason.SELECTOR_ERROR, (
        f"selector failed unexpectedly: {type(failure).__name__}" + (f": {text}" if text else ""))
