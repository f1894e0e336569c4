"""The selector's LLM path (docs/delegate.md step 5): one call, a tolerant read, a name check.

Loaded only when a task gets this far (no trigger fired, an LLM is
configured): the offline path never pays for the prompt and reply modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from vance_cli import llm
from vance_cli.base.errors import LLMError
from vance_cli.base.json_mode import resolve_json_mode
from vance_cli.ranking.bm25 import cap_inventory
from vance_cli.selector import parse, prompt
from vance_cli.selector.decision import Decision, Mode, NoneReason, Trace, match, none, none_for

if TYPE_CHECKING:
    from vance_cli.recipes.loader import Recipe
    from vance_cli.selector.core import Progress
    from vance_cli.workspace import Workspace


def ask_llm(ws: Workspace, task: str, inventory: Sequence[Recipe], model: str | None,
            progress: Progress | None, shortlist: Sequence[str] = ()) -> Decision:
    """Ask the LLM for one recipe of ``inventory`` (step 5); every failure becomes NONE.

    Args:
        ws: workspace (settings, prompts, catalog).
        task: the task.
        inventory: the recipes the selector may choose from.
        model: the caller's model preference (beats ``llm.model``).
        progress: wraps the call (the CLI's spinner).
        shortlist: the offline ranking's best recipe names, shown first (``combine``).

    Returns:
        The decision, with the call's trace.
    """
    config = llm.LLMConfig.from_settings(ws.settings, model)
    trace = Trace(model=config.model, endpoint=config.endpoint,
                  json_mode=resolve_json_mode(config.json_mode, config.base_url))
    try:
        shown, _capped = cap_inventory(inventory, task)
        source, path = prompt.template_source(ws)
        messages = prompt.render_messages(source, path, task, shown, ws.catalog(),
                                          len(inventory), shortlist)
        schema = prompt.reply_schema([r.name for r in shown])
        with progress() if progress else nullcontext():
            try:
                answer = llm.complete(config, messages, schema)
            except LLMError as exc:
                if not prompt.context_exceeded(exc.message):
                    raise
                # a small context window: the short prompt (docs/delegate.md step 5)
                source, path = prompt.template_source(ws, prompt.SHORT_PROMPT_NAME)
                messages = prompt.render_messages(source, path, task, shown, ws.catalog(),
                                                  len(inventory), shortlist)
                answer = llm.complete(config, messages, schema)
        trace = replace(trace, model=answer.model, json_mode=answer.json_mode,
                        raw_reply=answer.text, finish_reason=answer.finish_reason,
                        prompt_tokens=answer.prompt_tokens,
                        completion_tokens=answer.completion_tokens)
        reply = parse.parse_reply(answer.text, answer.finish_reason)
        if reply.recipe is None:
            return none(NoneReason.LLM_NONE,
                        reply.rationale or "the LLM answered NONE without a rationale",
                        Mode.LLM, trace)
        by_name = {r.name: r for r in inventory}
        name = parse.check_name(reply.recipe, list(by_name))
        return match(by_name[name], reply.rationale or f"the LLM chose '{name}'", Mode.LLM, trace)
    except Exception as exc:  # every failure becomes NONE; the trace is kept
        reason, rationale = none_for(exc)
        return none(reason, rationale, Mode.LLM, trace)
