"""zaphod: a council or a debate of heads, then a synthesis (docs/engines.md "zaphod").

Rules:
- The heads are the recipe's ``params.heads`` (name, persona, recipe —
  ``default`` when none). Without heads, a first LLM call picks
  ``params.personas`` (default 3) personas that fit the question.
- Each head is a child process (``Turn.spawn``, ``processes.children``) whose task is the
  question with a persona block. The heads of a round run side by side, at
  most ``maxParallel`` at a time; their progress lines show on the terminal,
  their answers do not stream (they would interleave).
- ``council``: one round. ``debate``: up to ``maxRounds`` rounds; between
  rounds one LLM call checks for consensus (``{"consensus", "reason"}``;
  only different practical conclusions count as dissent) and stops the
  debate when there is one; each later round steers the same heads with the
  others' latest answers.
- A head that fails (an LLM error, no answer) is skipped from then on and
  named in the payload; when every head failed the turn fails.
- The synthesis — one streamed LLM call over the question, the
  ``synthesisPrompt`` and every head's last answer — is the result; the
  process ends ``DONE`` with the heads' answers in its outcome payload.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vance_cli.base import replies
from vance_cli.base.errors import CannotRun, DocumentError, VanceError
from vance_cli.delegate.request import slugify
from vance_cli.engines import chat
from vance_cli.engines.zaphod.params import ZaphodParams
from vance_cli.processes.turn import Process, Turn, TurnEnd, TurnOutcome
from vance_cli.recipes import params as engine_params

PERSONAS_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"heads": {"type": "array", "items": {
        "type": "object", "properties": {"name": {"type": "string"},
                                         "persona": {"type": "string"}},
        "required": ["name", "persona"], "additionalProperties": False}}},
    "required": ["heads"],
    "additionalProperties": False,
}
"""The persona call's reply."""

CONSENSUS_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"consensus": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["consensus", "reason"],
    "additionalProperties": False,
}
"""The consensus check's reply."""

DEFAULT_SYNTHESIS = ("Bring the views together: where they agree, where they differ and why,"
                     " the arguments that decide it, and one clear recommendation.")
"""The synthesis instructions when the recipe sets no ``synthesisPrompt``."""

ANSWER_CHARS = 12_000
"""Characters of one head's answer shown to the synthesis and to the other heads."""


@dataclass(slots=True)
class Seat:
    """One head at the table: who it is, its child process, its latest answer."""

    name: str
    persona: str
    recipe: str
    child: Process | None = None
    answers: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def live(self) -> bool:
        """True while the head answers (it has not failed)."""
        return self.error is None

    @property
    def status(self) -> str:
        """``answered``, ``failed``, or ``asked`` while its answer is awaited."""
        if not self.live:
            return "failed"
        return "answered" if self.answers else "asked" if self.child else "failed"

    def to_json(self) -> dict[str, Any]:
        """Return the head as the payload lists it."""
        return {"name": self.name, "persona": self.persona, "recipe": self.recipe,
                "process": self.child.id if self.child else None,
                "status": self.status,
                "answer": self.answers[-1] if self.answers else None, "error": self.error,
                "rounds": len(self.answers)}


def pick_personas(turn: Turn, question: str, count: int) -> list[Seat]:
    """Ask for ``count`` personas that fit the question.

    Raises:
        CannotRun: the reply holds no usable personas (after one correction).
    """
    messages = [
        {"role": "system", "content": (
            f"You convene a council of {count} experts or stakeholders for a question. Pick"
            f" {count} distinct, complementary perspectives that matter for this question."
            ' Answer with one JSON object: {"heads": [{"name": a short role name,'
            ' "persona": one sentence: role, stance and expertise}]}.')},
        {"role": "user", "content": question},
    ]
    for _ in range(2):
        answer = turn.complete(messages, purpose="personas", schema=PERSONAS_SCHEMA)
        found = replies.find_object(answer.text) or {}
        seats = _seats(found.get("heads"), count)
        if len(seats) >= 2:
            return seats
        messages += [{"role": "assistant", "content": answer.text},
                     {"role": "user", "content": f"Answer with the JSON object only, with"
                      f" {count} heads, each with a name and a persona."}]
    raise CannotRun("the council has no members: the persona call named none",
                    process=turn.process.id)


def _seats(raw: Any, count: int) -> list[Seat]:
    seats: list[Seat] = []
    if not isinstance(raw, list):
        return seats
    for item in raw[:count]:
        if not isinstance(item, Mapping):
            continue
        name = slugify(str(item.get("name") or ""), 40)
        persona = str(item.get("persona") or "").strip()
        if name != "task" and persona and name not in {s.name for s in seats}:
            seats.append(Seat(name, persona, "default"))
    return seats


def head_task(seat: Seat, question: str) -> str:
    """Return a head's first task: its persona block and the question."""
    return (f"[Your role / persona]\nYou are {seat.name}: {seat.persona}\nAnswer from this"
            " perspective only, in your own voice. Be concrete, and say where you are unsure."
            f"\n\n[Question]\n{question}")


def round_steer(seat: Seat, seats: Sequence[Seat], number: int, total: int) -> str:
    """Return a debate round's message to a head: the others' latest answers."""
    others = "\n\n".join(f"--- {s.name} ---\n{s.answers[-1][:ANSWER_CHARS]}"
                         for s in seats if s is not seat and s.live and s.answers)
    return (f"[Round {number} of {total}]\nThe other members' latest answers:\n\n{others}\n\n"
            "Confirm, clarify or contradict them from your perspective. Keep what still"
            " holds, change what they convinced you of, and give your complete answer again.")


def _views(seats: Sequence[Seat]) -> str:
    parts = []
    for seat in seats:
        if seat.answers and seat.live:
            parts.append(f"--- {seat.name} ({seat.persona}) ---\n{seat.answers[-1][:ANSWER_CHARS]}")
        else:
            parts.append(f"--- {seat.name} ---\n[head failed: {seat.error or 'no answer'}]")
    return "\n\n".join(parts)


def consensus(turn: Turn, question: str, seats: Sequence[Seat]) -> tuple[bool, str]:
    """Ask whether the heads agree on the practical conclusion: ``(consensus, reason)``.

    A reply without a readable verdict counts as no consensus.
    """
    messages = [
        {"role": "system", "content": (
            "You check a debate for consensus. Only different practical conclusions count"
            " as dissent; different wording or emphasis does not. Answer with one JSON object:"
            ' {"consensus": true or false, "reason": one sentence}.')},
        {"role": "user", "content": f"Question:\n{question}\n\nViews:\n{_views(seats)}"},
    ]
    answer = turn.complete(messages, purpose="consensus", schema=CONSENSUS_SCHEMA)
    found = replies.find_object(answer.text) or {}
    agreed = found.get("consensus")
    return agreed is True, str(found.get("reason") or "").strip()


def _run_round(turn: Turn, seats: list[Seat], params: ZaphodParams,
               number: int, question: str) -> None:
    jobs: list[tuple[Process, str | None]] = []
    live = [s for s in seats if s.live]
    for seat in live:
        if seat.child is None:
            try:
                seat.child = turn.spawn(seat.recipe, head_task(seat, question),
                                        seat.name, title=f"{turn.process.title}: {seat.name}")
            except VanceError as exc:  # a head that cannot start is a failed head
                seat.error = f"cannot start: {exc.message}"
                turn.sink.status(f"head {seat.name}: failed, skipped: {seat.error}")
                continue
            jobs.append((seat.child, None))
        else:
            jobs.append((seat.child, round_steer(seat, seats, number, params.maxRounds)))
    turn.check()
    turn.save_state(_state(params, seats, number - 1, False, ""))  # heads drawn as asked
    results = turn.run_side_by_side(jobs, params.maxParallel,
                                    keep_open=params.pattern == "debate")
    by_id = {r.process.id: r for r in results}
    for seat in live:
        result = by_id.get(seat.child.id) if seat.child else None
        if result is None:
            continue
        if result.ok:
            seat.answers.append((result.text or "").strip())
            turn.sink.status(f"head {seat.name}: answered (round {number},"
                             f" process {result.process.id[:8]})")
        else:
            seat.error = result.error or "no answer"
            turn.sink.status(f"head {seat.name}: failed, skipped: {seat.error}")


def run_turn(turn: Turn) -> TurnOutcome:
    """Convene the heads, let them answer (and debate), and synthesise (module rules).

    Raises:
        CannotRun: no persona could be picked, or every head failed.
        DocumentError: the params break the schema. LLMError, BudgetExceeded: a call failed.
    """
    try:
        params = engine_params.parse(ZaphodParams, turn.process.params)
    except ValueError as exc:
        raise DocumentError(f"recipe '{turn.process.recipe}': {exc}") from None
    assert isinstance(params, ZaphodParams)
    question = "\n\n".join(m.content for m in turn.inputs if m.role == "user") \
        or turn.process.goal
    seats = [Seat(h.name, h.persona, h.recipe) for h in params.heads] or \
        pick_personas(turn, question, params.personas)
    turn.sink.status(f"{params.pattern}: {', '.join(s.name for s in seats)}")
    rounds, agreed, why = 0, False, ""
    total = params.maxRounds if params.pattern == "debate" else 1
    try:
        for number in range(1, total + 1):
            if number > 1:
                agreed, why = consensus(turn, question, seats)
                turn.sink.status(f"consensus: {'yes' if agreed else 'no'}"
                                 + (f" ({why})" if why else ""))
                if agreed:
                    break
            _run_round(turn, seats, params, number, question)
            rounds = number
            turn.save_state(_state(params, seats, rounds, agreed, why))
            if sum(s.live for s in seats) < 2 and params.pattern == "debate":
                break
    finally:
        turn.close_children([s.child for s in seats if s.child is not None])
    if not any(s.live and s.answers for s in seats):
        raise CannotRun("every head failed: " + "; ".join(f"{s.name}: {s.error}" for s in seats),
                        process=turn.process.id)
    instructions = params.synthesisPrompt or DEFAULT_SYNTHESIS
    messages = [
        {"role": "system", "content": chat.system_prompt(turn, "zaphod", instructions)},
        {"role": "user", "content": (
            f"Question:\n{question}\n\n{params.pattern}, {rounds} round(s)"
            + (f", consensus: {why}" if agreed else "") + f"\n\nThe heads' answers:\n\n"
            f"{_views(seats)}")},
    ]
    turn.sink.status("synthesis")
    answer = turn.complete(messages, purpose="synthesis", stream=True, temperature=0.3)
    state = _state(params, seats, rounds, agreed, why)
    turn.save_state(state)
    return TurnOutcome(settle=TurnEnd.DONE, reply=answer.text, outcome=state, model=answer.model,
                       tokens_in=answer.prompt_tokens, tokens_out=answer.completion_tokens)


def _state(params: ZaphodParams, seats: Sequence[Seat], rounds: int,
           agreed: bool, why: str) -> dict[str, Any]:
    return {"engine": "zaphod", "pattern": params.pattern, "rounds": rounds,
            "consensusReached": agreed, "consensusReason": why or None,
            "heads": [s.to_json() for s in seats],
            "failed": [s.name for s in seats if s.status == "failed"]}

