"""vogon: a fixed plan of phases, run step by step (docs/engines.md "vogon").

Rules:
- The plan is the recipe's ``params.phases`` and ``params.result``, or the
  strategy document ``params.strategy`` names (``strategies/<name>.yaml``
  through the cascade). It is frozen into the process's state on the first
  turn: a strategy edited later does not change a running process.
- A phase's worker is a child process (``Turn.spawn``, ``processes.children``): its recipe
  is the phase's ``worker``, else ``default`` with the phase's ``prompt``
  as its instructions. Its task is the phase's ``input`` template, rendered
  over ``task``, ``params``, ``phases`` (earlier phases' outputs by name),
  ``previous`` (the last output), ``decisions``, ``feedback`` and ``lang``;
  an empty input is the task and the previous phase's output.
- A ``loop`` runs the phase again, at most ``maxIterations`` times: with a
  ``scorer``, one LLM call rates each output (``{"score", "summary"}``,
  score 0 to 1) and the phase ends once the score reaches the threshold;
  without one, every round revises the last output. Each round's worker
  gets the last version and what to improve. ``maxWorkerSpawns`` bounds the
  workers of the whole process.
- A ``checkpoint`` after a phase settles the turn ``BLOCKED`` with the
  phase's output and the question; the person's next message (``vance
  process steer ID …``) answers it: ``approval`` takes yes (go on) or no,
  optionally ``no: what to change`` (the phase runs again with that
  feedback); ``decision`` takes one of the options, by text or number;
  ``feedback`` takes any text. An answer that fits none keeps it
  ``BLOCKED`` and asks again.
- The result is the ``result`` template over the same names, else the last
  phase's output; the process ends ``DONE`` with the phases in its outcome.
  A worker that fails fails the turn (the process goes ``STALE`` naming the
  phase); the state keeps the finished phases, so ``vance process run ID``
  goes on from the failed one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from vance_cli.base import replies
from vance_cli.base.errors import BudgetExceeded, DocumentError, VanceError
from vance_cli.documents.cascade import Kind, load_yaml
from vance_cli.engines import chat
from vance_cli.engines.vogon.params import StrategyDocument, VogonParams
from vance_cli.processes.turn import Message, Process, Turn, TurnEnd, TurnOutcome
from vance_cli.recipes import params as engine_params

DEFAULT_WORKER = "default"
"""The recipe of a phase that gives a prompt instead of a worker."""

YES = frozenset({"yes", "y", "ok", "okay", "approve", "approved", "accept", "lgtm", "go",
                 "continue", "ja", "j", "passt", "weiter", "genehmigt", "einverstanden"})
"""Answers that approve a phase (lower case, trailing punctuation ignored)."""

NO = re.compile(r"^\s*(no|n|nope|reject|rejected|nein|abgelehnt)\b\s*[:,.\-\u2013\u2014!]*\s*(.*)$",
                re.I | re.S)
"""An answer that rejects a phase; what follows is the feedback."""

SCORE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}, "summary": {"type": "string"}},
    "required": ["score", "summary"],
    "additionalProperties": False,
}
"""The scorer's reply."""

SCORER_CORRECTIONS = 2
"""Re-asks of a scorer whose reply holds no readable score; then the loop ends as it is."""

NOT_APPROVED = "The person did not approve this version; improve it."
"""Feedback of a bare ``no``."""


class PhaseFailed(VanceError):
    """A phase's worker gave no answer: the turn fails, naming the phase."""

    code = "phase_failed"


def load_plan(turn: Turn, params: VogonParams) -> dict[str, Any]:
    """Return the plan to freeze: ``{"strategy", "phases", "result"}``.

    Raises:
        DocumentError: no plan, an unknown or broken strategy document.
    """
    if params.phases:
        return {"strategy": None, "result": params.result,
                "phases": [p.model_dump(exclude_none=True) for p in params.phases]}
    if not params.strategy:
        raise DocumentError(f"recipe '{turn.process.recipe}' has no plan: give it"
                            " params.phases, or run it with --param strategy=NAME"
                            " (a strategies/NAME.yaml document)")
    ref = turn.ws.cascade(Kind.STRATEGIES).find(params.strategy)
    if ref is None:
        known = ", ".join(r.name for r in turn.ws.cascade(Kind.STRATEGIES).list()) or "none"
        raise DocumentError(f"strategy '{params.strategy}' not found in any layer"
                            f" (strategies: {known})", path=f"strategies/{params.strategy}.yaml")
    data = load_yaml(ref)
    try:
        document = StrategyDocument.model_validate(data)
    except ValueError as exc:
        raise DocumentError(f"strategy '{params.strategy}': {exc}", path=str(ref.path)) \
            from None
    return {"strategy": params.strategy, "result": params.result or document.result,
            "phases": [p.model_dump(exclude_none=True) for p in document.phases]}


def _variables(turn: Turn, state: Mapping[str, Any]) -> dict[str, Any]:
    done = state["done"]
    outputs = {name: done[name]["output"] for name in done}
    previous = done[state["order"][-1]]["output"] if state["order"] else ""
    return {"task": turn.process.goal, "params": dict(turn.process.params), "phases": outputs,
            "previous": previous, "decisions": dict(state["decisions"]),
            "feedback": dict(state["feedback"]), "lang": turn.ws.settings.lang}


def phase_input(turn: Turn, phase: Mapping[str, Any], state: Mapping[str, Any]) -> str:
    """Return a phase's task: its ``input`` template rendered, or the task and previous output.

    Raises:
        DocumentError: the template is broken.
    """
    variables = _variables(turn, state)
    source = str(phase.get("input") or "")
    if source.strip():
        return chat.fill(source, variables, f"phase '{phase['name']}' input")
    text = turn.process.goal
    if variables["previous"]:
        text += f"\n\nThe previous phase's output:\n\n{variables['previous']}"
    return text


def _revision(base: str, last: str, feedback: str) -> str:
    return (f"{base}\n\nYour last version:\n\n{last}\n\nWhat to change:\n{feedback}\n\n"
            "Write the complete new version.")


def _score(turn: Turn, phase: Mapping[str, Any], output: str) -> tuple[float | None, str]:
    """Rate a phase's output with the loop's scorer: ``(score 0 to 1 or None, summary)``."""
    scorer = phase["loop"].get("scorer") or {}
    messages = [
        {"role": "system", "content": (
            f"{scorer.get('prompt') or ''}\nYou rate a text against its task. Answer with one"
            ' JSON object: {"score": a number from 0 to 1, "summary": what to improve}.').strip()},
        {"role": "user", "content": f"Task:\n{turn.process.goal}\n\nText:\n{output}"},
    ]
    for _ in range(SCORER_CORRECTIONS + 1):
        answer = turn.complete(messages, purpose=f"score:{phase['name']}", schema=SCORE_SCHEMA)
        found = replies.find_object(answer.text) or {}
        score = found.get("score")
        if isinstance(score, int | float) and not isinstance(score, bool):
            value = float(score)
            value = value / 10 if 1 < value <= 10 else value / 100 if 10 < value <= 100 else value
            if 0 <= value <= 1:
                return value, str(found.get("summary") or "").strip()
        messages += [{"role": "assistant", "content": answer.text},
                     {"role": "user", "content": 'Answer with the JSON object only: {"score":'
                      ' a number from 0 to 1, "summary": "what to improve"}.'}]
    return None, ""


def run_phase(turn: Turn, state: dict[str, Any], index: int, feedback: str | None) -> None:
    """Run phase ``index`` (all its loop rounds) and record it in ``state``.

    Raises:
        PhaseFailed: its worker gave no answer. BudgetExceeded: maxWorkerSpawns is spent.
        DocumentError: a template is broken, or the worker recipe cannot be used.
    """
    phases: list[dict[str, Any]] = state["plan"]["phases"]
    phase = phases[index]
    name = phase["name"]
    loop = phase.get("loop")
    rounds = int(loop.get("maxIterations", 3)) if loop else 1
    threshold = float((loop.get("scorer") or {}).get("threshold", 0.7)) if loop else 0.0
    base = phase_input(turn, phase, state)
    last = state["done"].get(name, {}).get("output") if feedback else None
    recipe = phase.get("worker") or DEFAULT_WORKER
    record: dict[str, Any] = {"status": "running", "children": [], "rounds": 0}
    for round_number in range(1, rounds + 1):
        turn.check()
        if state["spawns"] >= state["maxWorkerSpawns"]:
            raise BudgetExceeded(f"phase '{name}': the process started its"
                                 f" {state['maxWorkerSpawns']} workers (params.maxWorkerSpawns)",
                                 "worker_spawns", state["maxWorkerSpawns"])
        goal = _revision(base, last, feedback) if last and feedback else base

        def under_way(child: Process) -> dict[str, Any]:
            """The state stored with the worker's creation: it is counted and shown."""
            return {**state, "spawns": state["spawns"] + 1,
                    "current": {"name": name, "child": child.id}}

        try:
            child = turn.spawn(recipe, goal, name,
                               prompt=None if phase.get("worker") else phase.get("prompt"),
                               title=f"{turn.process.title}: {name}", state=under_way)
        except VanceError as exc:
            raise PhaseFailed(f"phase '{name}': its worker cannot start: {exc.message}") from None
        state["spawns"] += 1
        record["children"].append(child.id)
        record["rounds"] = round_number
        state["current"] = {"name": name, "child": child.id}
        turn.sink.status(f"phase {index + 1}/{len(phases)} {name}: running ({recipe},"
                         f" process {child.id[:8]})")
        result = turn.run_child(child)
        if not result.ok:
            raise PhaseFailed(f"phase '{name}' failed: its worker {child.id[:8]} ({recipe}):"
                              f" {result.error}")
        last = (result.text or "").strip()
        if not loop or round_number == rounds:
            break
        if loop.get("scorer"):
            score, summary = _score(turn, phase, last)
            record["score"] = score
            if score is None:
                record["note"] = "the scorer's reply held no score; the loop ended"
                break
            turn.sink.status(f"phase {name}: score {score:.2f} (threshold {threshold:g})")
            if score >= threshold:
                break
            feedback = summary or "Improve it."
        else:
            feedback = "Revise it: fix its weaknesses and make it better."
    record.update(status="done", output=last)
    state["done"][name] = record
    state["current"] = None
    if name not in state["order"]:
        state["order"].append(name)


def _question(phase: Mapping[str, Any], process_id: str) -> str:
    checkpoint = phase["checkpoint"]
    kind = checkpoint["type"]
    message = checkpoint.get("message") or {
        "approval": f"Approve the {phase['name']}?",
        "decision": "Which way?",
        "feedback": f"Your feedback on the {phase['name']}?",
    }[kind]
    if kind == "approval":
        how = "answer yes to go on, or no: what to change"
    elif kind == "decision":
        how = "answer one of: " + ", ".join(f"{n} {option}" for n, option in
                                            enumerate(checkpoint.get("options") or [], 1))
    else:
        how = "answer with your feedback"
    return f"{message} ({how}: vance process steer {process_id} \"…\")"


def _answer(inputs: Sequence[Message]) -> str | None:
    said = [m.content for m in inputs if m.role == "user"]
    return said[-1].strip() if said else None


def apply_answer(state: dict[str, Any], answer: str) -> str | None:
    """Apply the person's answer to the waiting checkpoint.

    Returns:
        The feedback to run the phase again with (a rejection), "" to go on,
        or None when the answer fits nothing (ask again).
    """
    phase = state["plan"]["phases"][state["waiting"]["index"]]
    checkpoint = phase["checkpoint"]
    word = answer.strip().lower().rstrip(".!")
    if checkpoint["type"] == "approval":
        if word in YES:
            return ""
        rejected = NO.match(answer)
        return (rejected.group(2).strip() or NOT_APPROVED) if rejected else None
    if checkpoint["type"] == "decision":
        chosen = _option(checkpoint, word)
        if chosen is not None:
            state["decisions"][phase["name"]] = chosen
        return None if chosen is None else ""
    if not answer.strip():
        return None
    state["feedback"][phase["name"]] = answer.strip()
    return ""


def _option(checkpoint: Mapping[str, Any], word: str) -> str | None:
    """Return the option a decision answer names (its text or its number), else None."""
    options = [str(o) for o in checkpoint.get("options") or []]
    chosen = next((o for o in options if o.strip().lower() == word), None)
    if chosen is None and word.isdigit() and 1 <= int(word) <= len(options):
        chosen = options[int(word) - 1]
    return chosen


def new_state(turn: Turn) -> dict[str, Any]:
    """Return the state of a process's first turn: the frozen plan, nothing done.

    Raises:
        DocumentError: the plan cannot be loaded (see ``load_plan``).
    """
    try:
        params = engine_params.parse(VogonParams, turn.process.params)
    except ValueError as exc:
        raise DocumentError(f"recipe '{turn.process.recipe}': {exc}") from None
    assert isinstance(params, VogonParams)
    return {"engine": "vogon", "plan": load_plan(turn, params), "next": 0, "done": {},
            "order": [], "decisions": {}, "feedback": {}, "waiting": None, "spawns": 0,
            "maxWorkerSpawns": params.maxWorkerSpawns}


def run_turn(turn: Turn) -> TurnOutcome:
    """Take the next step of the plan (see the module rules).

    Raises:
        PhaseFailed, BudgetExceeded, DocumentError, LLMError: the turn fails (the
        process goes STALE with the reason; the state keeps what was done).
    """
    state = turn.load_state() or new_state(turn)
    phases = state["plan"]["phases"]
    feedback: str | None = None
    if state["waiting"] is not None:
        answer = _answer(turn.inputs)
        verdict = apply_answer(state, answer) if answer is not None else None
        phase = phases[state["waiting"]["index"]]
        if verdict is None:
            reply = (f"'{answer}' does not answer this. " if answer else "") \
                + _question(phase, turn.process.id)
            turn.sink.text(reply + "\n")
            return TurnOutcome(settle=TurnEnd.BLOCKED, reply=reply)
        state["waiting"] = None
        if verdict:
            feedback = verdict
            state["feedback"][phase["name"]] = verdict
            state["next"] = phases.index(phase)
        else:
            state["next"] = phases.index(phase) + 1
    while state["next"] < len(phases):
        index = state["next"]
        phase = phases[index]
        try:
            run_phase(turn, state, index, feedback)
        except BaseException:
            turn.save_state(state)  # the finished rounds and phases outlive the failure
            raise
        feedback = None
        output = state["done"][phase["name"]]["output"]
        checkpoint = phase.get("checkpoint")
        if checkpoint:
            state["waiting"] = {"index": index, "type": checkpoint["type"]}
        else:
            state["next"] = index + 1
        turn.keep_state(state)  # the phase and what comes next: with the next worker or the end
        turn.sink.status(f"phase {index + 1}/{len(phases)} {phase['name']}: done")
        if checkpoint:
            question = _question(phase, turn.process.id)
            turn.sink.text(f"\n\n{question}\n")
            return TurnOutcome(settle=TurnEnd.BLOCKED, reply=f"{output}\n\n---\n{question}")
    result_source = str(state["plan"].get("result") or "")
    last = state["done"][state["order"][-1]]["output"] if state["order"] else ""
    reply = chat.fill(result_source, _variables(turn, state), "vogon result") \
        if result_source.strip() else last
    if result_source.strip():
        turn.sink.text(f"\n\n{reply}\n")
    summary = [{"name": p["name"], "status": state["done"].get(p["name"], {}).get("status",
                                                                                 "pending"),
                "rounds": state["done"].get(p["name"], {}).get("rounds", 0),
                "children": state["done"].get(p["name"], {}).get("children", [])}
               for p in phases]
    return TurnOutcome(settle=TurnEnd.DONE, reply=reply,
                       outcome={"strategy": state["plan"].get("strategy"), "phases": summary})

