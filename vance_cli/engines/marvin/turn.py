"""marvin: plan a task tree, have workers do it, write the answer (docs/engines.md "marvin").

Rules:
- A plan call returns the tree as JSON: ``{"goal", "tasks": [task …]}``; a
  task has a ``goal`` and optionally a ``recipe``, ``tasks`` (sub-tasks) or
  ``items`` (a list) with a ``template`` (the task of each item, a template
  over ``item``). A reply without a readable tree (cut off at the token
  cap, say) or a plan over a limit (the limit named) is asked again once,
  for a flat list of at most ``maxTreeNodes`` tasks: the second ask's
  schema allows no other shape.
- Limits, checked before anything runs: ``maxTreeNodes`` (tasks and items
  together), ``maxTreeDepth`` (levels of sub-tasks), ``maxItems`` per items
  task. The plan call's schema carries them too (``plan_schema``), so a
  grammar-constrained model cannot write one list past them. A plan still over a
  limit after the second ask ends the turn with the reason (the process
  goes ``STALE``), nothing started. ``maxLlmCalls`` bounds the calls of the whole
  turn, marvin's own and its children's: once spent, the tasks not yet run
  are skipped, named, and the answer is written from what was done.
- The tasks run depth-first, one after the other, each as a child process
  whose parent is marvin's (``Turn.spawn``, ``processes.children``):
  - with a ``recipe``: that recipe (it must exist, be in
    ``availableRecipes`` when that is set, and not be a marvin recipe);
  - without one: through the selector (process_create_delegate with marvin
    as the caller): one selector call; a NONE fails the task, with the
    selector's rationale;
  - with ``items``: the batch code asks the selector once for the template
    and starts one child per item (``delegate.batch``).
  A task whose worker fails is marked failed; the others go on.
- A final aggregate call (streamed) writes the answer from the goal and the
  children's results; the process ends ``DONE`` with the tree in its
  outcome. When no task delivered anything the turn fails instead.
- The tree, with each node's status, is the process's state, saved after
  every node: ``vance process show`` draws it, and a retry (``vance process
  run ID`` after a failure) goes on with the nodes not yet done.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from vance_cli.base import replies
from vance_cli.base.errors import BudgetExceeded, CannotRun, DocumentError, VanceError
from vance_cli.base.wording import shorten
from vance_cli.delegate.batch import BatchRequest, start_batch
from vance_cli.delegate.batch_input import Item
from vance_cli.delegate.flow import delegate
from vance_cli.delegate.request import DelegateRequest
from vance_cli.engines import chat
from vance_cli.engines.marvin.params import MarvinParams
from vance_cli.processes.turn import CloseReason, Process, Turn, TurnEnd, TurnOutcome
from vance_cli.recipes import params as engine_params
from vance_cli.recipes.loader import find_recipe, load_recipes

MARVIN = "marvin"
"""The engine's name (a marvin task never runs marvin again)."""

RESULT_CHARS = 6_000
"""Characters of one child's result shown to the aggregate call."""

PLAN_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "tasks": {"type": "array", "items": {"$ref": "#/$defs/task"}},
    },
    "required": ["goal", "tasks"],
    "$defs": {"task": {
        "type": "object",
        "properties": {
            "goal": {"type": "string"},
            "recipe": {"type": "string"},
            "items": {"type": "array", "items": {"type": "string"}},
            "template": {"type": "string"},
            "tasks": {"type": "array", "items": {"$ref": "#/$defs/task"}},
        },
        "required": ["goal"],
    }},
}
"""The plan call's reply (``plan_schema`` narrows ``recipe`` to the names a task may use)."""


def plan_schema(names: list[str], params: MarvinParams, *, flat: bool = False
                ) -> dict[str, Any]:
    """Return ``PLAN_SCHEMA`` narrowed to ``names`` and bounded by the limits in ``params``.

    Each task's ``recipe`` is an enum of ``names``; the tree is written out level by level
    (``task``, ``task-2`` …) to ``maxTreeDepth`` levels, and every list has a ``maxItems``:
    tasks at most ``maxTreeNodes`` less the tasks above them, items at most ``maxItems``.
    A server that turns the schema into a grammar (llama.cpp) then can neither write a
    recipe that does not exist nor go on writing one list past the limits until the
    reply's token cap. The total of tasks and items is no list's, so ``check_limits``
    still counts the whole tree. ``flat``: one level of at most ``maxTreeNodes`` tasks
    without items, a shape in which no plan breaks a limit (the second ask's).
    """
    base = PLAN_SCHEMA["$defs"]["task"]["properties"]
    depth = 1 if flat else params.maxTreeDepth
    defs: dict[str, Any] = {}
    for level in range(depth, 0, -1):
        room = max(1, params.maxTreeNodes - level)
        props: dict[str, Any] = {"goal": base["goal"]}
        if names:
            props["recipe"] = {"enum": names}
        if not flat:
            props["items"] = {**base["items"], "maxItems": min(params.maxItems, room)}
            props["template"] = base["template"]
        if level < depth:
            props["tasks"] = {"type": "array", "items": {"$ref": f"#/$defs/{_level(level + 1)}"},
                              "maxItems": room}
        defs[_level(level)] = {"type": "object", "properties": props, "required": ["goal"]}
    tasks = {**PLAN_SCHEMA["properties"]["tasks"], "minItems": 1,
             "maxItems": params.maxTreeNodes}
    return {**PLAN_SCHEMA, "properties": {**PLAN_SCHEMA["properties"], "tasks": tasks},
            "$defs": defs}


def _level(level: int) -> str:
    return "task" if level == 1 else f"task-{level}"


def _params(turn: Turn) -> MarvinParams:
    try:
        params = engine_params.parse(MarvinParams, turn.process.params)
    except ValueError as exc:
        raise DocumentError(f"recipe '{turn.process.recipe}': {exc}") from None
    assert isinstance(params, MarvinParams)
    return params


def _node(raw: Any, number: str) -> dict[str, Any] | None:
    """Return a plan task as a tree node (None when it is not a task)."""
    if isinstance(raw, str) and raw.strip():
        raw = {"goal": raw}
    if not isinstance(raw, Mapping) or not str(raw.get("goal") or "").strip():
        return None
    node: dict[str, Any] = {"id": number, "goal": str(raw["goal"]).strip(),
                            "status": "pending"}
    recipe = raw.get("recipe")
    if isinstance(recipe, str) and recipe.strip() and recipe.strip().lower() not in (
            "none", "null", "selector", "auto"):
        node["recipe"] = recipe.strip()
    items = raw.get("items")
    if isinstance(items, list) and items:
        node["items"] = [str(i).strip() if not isinstance(i, Mapping) else dict(i)
                         for i in items if i is not None and str(i).strip()]
        node["template"] = str(raw.get("template") or "").strip() or \
            node["goal"] + "\n\nItem: {{ item }}"
    subtasks = raw.get("tasks")
    if isinstance(subtasks, list) and subtasks:
        kids = [_node(t, f"{number}.{i}") for i, t in enumerate(subtasks, 1)]
        node["children"] = [k for k in kids if k is not None]
    return node


def read_plan(text: str) -> dict[str, Any] | None:
    """Return the tree of a plan reply (``{"goal", "children"}``), or None when it holds none."""
    found = replies.find_object(text)
    if found is None:
        return None
    raw_tasks = found.get("tasks")
    if not isinstance(raw_tasks, list):
        return None
    kids = [_node(t, str(i)) for i, t in enumerate(raw_tasks, 1)]
    tasks = [k for k in kids if k is not None]
    if not tasks:
        return None
    return {"id": "0", "goal": str(found.get("goal") or "").strip(), "status": "pending",
            "children": tasks}


def walk(node: Mapping[str, Any], depth: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Yield ``(node, depth)`` for the node's tasks, depth-first (the root is not yielded)."""
    for child in node.get("children") or ():
        yield child, depth + 1
        yield from walk(child, depth + 1)


def check_limits(tree: Mapping[str, Any], params: MarvinParams) -> str | None:
    """Return why the tree breaks a limit, or None when it fits."""
    nodes = list(walk(tree))
    count = len(nodes) + sum(len(n.get("items") or ()) for n, _ in nodes)
    if count > params.maxTreeNodes:
        return (f"the plan has {count} tasks and items: over the limit of"
                f" {params.maxTreeNodes} (params.maxTreeNodes)")
    depth = max(d for _, d in nodes)
    if depth > params.maxTreeDepth:
        return (f"the plan is {depth} levels deep: over the limit of {params.maxTreeDepth}"
                " (params.maxTreeDepth)")
    for node, _ in nodes:
        if len(node.get("items") or ()) > params.maxItems:
            return (f"task {node['id']} has {len(node['items'])} items: over the limit of"
                    f" {params.maxItems} (params.maxItems)")
    return None


def _usable(turn: Turn, params: MarvinParams) -> list[Any]:
    """Return the recipes a task may name (at most 40: the prompt lists them)."""
    inventory = [r for r in load_recipes(turn.ws).inventory() if r.engine != MARVIN]
    if params.availableRecipes:
        inventory = [r for r in inventory if r.name in params.availableRecipes]
    return inventory[:40]


def _recipes_text(recipes: list[Any]) -> str:
    lines = [f"- {r.name}: {r.description}" for r in recipes]
    return ("Recipes a task may name (leave 'recipe' out and the selector picks one):\n"
            + "\n".join(lines))


def plan(turn: Turn, params: MarvinParams) -> dict[str, Any]:
    """Ask for the task tree (one correction when the reply holds none).

    Raises:
        CannotRun: no readable tree. BudgetExceeded: the tree breaks a limit.
    """
    limits = (f"Limits: at most {params.maxTreeNodes} tasks and items in all, at most"
              f" {params.maxTreeDepth} levels of sub-tasks, at most {params.maxItems} items"
              " per task.")
    usable = _usable(turn, params)
    names = [r.name for r in usable]
    schema = plan_schema(names, params)
    system = chat.system_prompt(turn, MARVIN, _recipes_text(usable), limits, (
        'Answer with one JSON object: {"goal": the goal in one line, "tasks": [{"goal": what'
        ' to deliver, "recipe": optional recipe name, "tasks": optional sub-tasks,'
        ' "items": optional list of texts, "template": the task of each item, using'
        ' {{ item }}}]}.'))
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": turn.process.goal}]
    for attempt in range(2):
        answer = turn.complete(messages, purpose="plan", schema=schema)
        tree = read_plan(answer.text)
        if tree is not None:
            tree["goal"] = tree["goal"] or turn.process.goal
            why = check_limits(tree, params)
            if not why:
                return tree
            if attempt:
                raise BudgetExceeded(f"{why}; nothing was started", "tree_nodes",
                                     params.maxTreeNodes)
            fix = f"Your plan breaks a limit: {why}. Answer"
        else:
            fix = "Answer with the JSON object only,"
        fix += (f" with a flat list of at most {params.maxTreeNodes} tasks, without sub-tasks"
                " or items.")
        schema = plan_schema(names, params, flat=True)
        messages += [{"role": "assistant", "content": answer.text},
                     {"role": "user", "content": fix}]
    raise CannotRun("the plan call gave no task tree", process=turn.process.id)


class Runner:
    """Runs the tree's nodes for one turn, saving the tree after each."""

    def __init__(self, turn: Turn, params: MarvinParams,
                 state: dict[str, Any]) -> None:
        self.turn = turn
        self.params = params
        self.state = state
        self.tree: dict[str, Any] = state["tree"]
        self.total = sum(1 for _ in walk(self.tree))
        for node, _ in walk(self.tree):  # a turn that died mid-node runs it again
            if node["status"] == "running":
                node["status"] = "pending"

    def llm_calls(self) -> int:
        """Calls of this turn so far: marvin's own and its children's."""
        own = self.turn.stored_calls()
        return own + sum(self.turn.stored_calls(pid) for pid in self.state["children"])

    def save(self) -> None:
        """Store the tree now."""
        self.turn.save_state(self.state)

    def run(self) -> None:
        """Run every node not yet done, depth-first."""
        for node, _ in walk(self.tree):
            if node["status"] != "pending" or node.get("children"):
                continue
            self.turn.check()
            if self.llm_calls() >= self.params.maxLlmCalls:
                node.update(status="skipped", error=f"the turn made its {self.params.maxLlmCalls}"
                            " LLM calls (params.maxLlmCalls)")
                self.save()
                continue
            node["status"] = "running"
            self.save()
            try:
                if node.get("items"):
                    self._items(node)
                else:
                    self._task(node)
            except VanceError as exc:
                node.update(status="failed", error=exc.message)
            self.turn.sink.status(f"task {node['id']}: {node['status']}"
                                  + (f" ({node['error']})" if node.get("error") else ""))
            self.save()
        for node, _ in sorted(walk(self.tree), key=lambda pair: -pair[1]):
            kids = node.get("children")
            if kids and node["status"] == "pending":
                node["status"] = "done" if any(k["status"] == "done" for k in kids) else "failed"
        self.save()

    def _check_recipe(self, name: str) -> None:
        recipe = find_recipe(self.turn.ws, name)
        if recipe.engine == MARVIN:
            raise CannotRun(f"recipe '{name}' is a marvin recipe: marvin does not run marvin")
        if self.params.availableRecipes and name not in self.params.availableRecipes:
            raise CannotRun(f"recipe '{name}' is not in params.availableRecipes")

    def _task(self, node: dict[str, Any]) -> None:
        turn = self.turn
        self.turn.sink.status(f"task {node['id']}/{self.total}: {shorten(str(node['goal']), 60)}")
        if node.get("recipe"):
            self._check_recipe(node["recipe"])
            child = turn.spawn(node["recipe"], node["goal"], f"t{node['id']}")
        else:
            result = delegate(turn.ws, DelegateRequest(
                task=node["goal"], caller=turn.process.id,
                name=turn.child_name(f"t{node['id']}")))
            if result.process is None:
                node["selector"] = "NONE"
                raise CannotRun(f"no recipe fits: {result.decision.rationale}")
            child = result.process
            node["selector"] = child.recipe
            if child.engine == MARVIN:
                turn.close_child(child, CloseReason.STOPPED, "marvin does not run marvin")
                raise CannotRun(f"the selector chose '{child.recipe}', a marvin recipe:"
                                " marvin does not run marvin")
        self._run_child(node, child)

    def _run_child(self, node: dict[str, Any], child: Process) -> dict[str, Any]:
        node.update(process=child.id, recipe=child.recipe)
        self.state["children"].append(child.id)
        self.save()
        result = self.turn.run_child(child)
        if not result.ok:
            raise CannotRun(f"its worker {child.id[:8]} ({child.recipe}) failed: {result.error}")
        node.update(status="done", result=(result.text or "").strip())
        return node

    def _items(self, node: dict[str, Any]) -> None:
        turn = self.turn
        items = [Item(n, n, value) for n, value in enumerate(node["items"], 1)]
        batch = start_batch(turn.ws, BatchRequest(
            template=node["template"], items=items, caller=turn.process.id,
            name_prefix=turn.child_name(f"t{node['id']}")))
        decided = batch.decision.recipe.name if batch.decision and batch.decision.recipe \
            else None
        node["selector"] = decided or "per item"
        node["children"] = []
        for n, outcome in enumerate(batch.results(None), 1):
            kid: dict[str, Any] = {"id": f"{node['id']}.{n}", "goal": outcome.task or "",
                                   "status": "pending", "item": items[n - 1].value}
            node["children"].append(kid)
            process = outcome.result.process if outcome.result else None
            try:
                if process is None:
                    why = outcome.error.message if outcome.error else (
                        outcome.result.decision.rationale if outcome.result else "no result")
                    raise CannotRun(f"no process for this item: {why}")
                if process.engine == MARVIN:
                    turn.close_child(process, CloseReason.STOPPED, "marvin does not run marvin")
                    raise CannotRun("marvin does not run marvin")
                self._run_child(kid, process)
            except VanceError as exc:
                kid.update(status="failed", error=exc.message)
            self.save()
        done = sum(k["status"] == "done" for k in node["children"])
        node["status"] = "done" if done else "failed"
        if not done:
            node["error"] = "no item delivered a result"


def _snapshot(tree: Mapping[str, Any]) -> str:
    lines = []
    for node, depth in walk(tree):
        if node.get("children") and not node.get("items"):
            lines.append(f"{'  ' * (depth - 1)}[{node['id']}] {node['goal']}")
            continue
        if node.get("items"):
            lines.append(f"{'  ' * (depth - 1)}[{node['id']}] {node['goal']}")
            continue
        head = f"{'  ' * (depth - 1)}[{node['id']}] {node['goal']} — {node['status']}"
        if node["status"] == "done":
            lines.append(f"{head}\n<<< result\n{str(node.get('result'))[:RESULT_CHARS]}\n>>>")
        else:
            lines.append(f"{head}: {node.get('error') or 'not run'}")
    return "\n".join(lines)


def run_turn(turn: Turn) -> TurnOutcome:
    """Plan (first turn), run the tasks, write the answer (see the module rules).

    Raises:
        BudgetExceeded: the plan breaks a limit. CannotRun: no plan, or nothing delivered.
        LLMError, DocumentError: a call or the prompt failed.
    """
    params = _params(turn)
    state = turn.load_state()
    if not state.get("tree"):
        tree = plan(turn, params)
        state = {"engine": MARVIN, "tree": tree, "children": []}
        turn.save_state(state)
        turn.sink.status(f"plan: {sum(1 for _ in walk(tree))} tasks")
    runner = Runner(turn, params, state)
    runner.run()
    leaves = [n for n, _ in walk(runner.tree) if not n.get("children")]
    done = [n for n in leaves if n["status"] == "done"]
    if not done:
        raise CannotRun("no task delivered a result: " + "; ".join(
            f"{n['id']}: {n.get('error') or n['status']}" for n in leaves)[:2000],
            process=turn.process.id)
    messages = [
        {"role": "system", "content": chat.system_prompt(turn, MARVIN, (
            "Write the final answer to the goal from the tasks' results below."
            f" {len(done)} of {len(leaves)} tasks delivered a result."))},
        {"role": "user", "content": f"Goal:\n{turn.process.goal}\n\nTasks:\n"
                                    f"{_snapshot(runner.tree)}"},
    ]
    turn.sink.status("aggregate")
    answer = turn.complete(messages, purpose="aggregate", stream=True, temperature=0.3)
    failed = [n["id"] for n in leaves if n["status"] != "done"]
    return TurnOutcome(settle=TurnEnd.DONE, reply=answer.text, model=answer.model,
                       tokens_in=answer.prompt_tokens, tokens_out=answer.completion_tokens,
                       outcome={"engine": MARVIN, "nodeCount": len(leaves),
                                "succeeded": len(done), "failed": failed,
                                "tree": runner.tree})

