"""The tools ``vance mcp`` offers: names, what each tells a calling model, arguments, handler.

Rules (docs/mcp.md "Tools"):
- A task without a recipe name goes to ``process_create_delegate``; an
  explicit recipe name to ``process_create``. The descriptions say so, and
  that a ``NONE`` decision is an answer, not an error.
- Each tool's arguments are fields of dataclasses (``Part``): the core's
  ``DelegateRequest`` and ``ProcessSpec``, and the options of
  ``mcp/options.py``; its input schema is generated from them.
- Each tool answers with the JSON document of its ``--json`` command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from vance_cli.delegate.request import DelegateRequest
from vance_cli.mcp import handlers, options
from vance_cli.mcp.arguments import Part, arguments_model, input_schema, parse_arguments
from vance_cli.processes.model import ProcessSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

    from vance_cli.mcp.handlers import ToolOutput
    from vance_cli.workspace import Workspace


@dataclass(frozen=True)  # not slotted: ``model`` is cached on the instance
class Tool:
    """One tool.

    Attributes:
        name: the tool's name (``process_create_delegate`` …).
        description: what it does and when a calling model should use it.
        parts: the dataclasses its arguments come from, in the handler's order.
        handler: called with the workspace and one value per part.
        read_only: it changes nothing (a hint for hosts; reads may still reap
            stale processes, docs/processes.md).
    """

    name: str
    description: str
    parts: tuple[Part, ...]
    handler: Callable[..., ToolOutput]
    read_only: bool = False

    @cached_property
    def model(self) -> type[BaseModel]:
        """The pydantic model of the arguments (built on first use)."""
        return arguments_model(self.name, self.parts)

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, generated from the parts."""
        return input_schema(self.model)

    def call(self, ws: Workspace, arguments: Mapping[str, Any]) -> ToolOutput:
        """Validate the arguments and run the handler.

        Raises:
            InputError: invalid arguments. VanceError: as the handler.
        """
        return self.handler(ws, *parse_arguments(self.model, self.parts, arguments))


_PROCESS_ID = {"process_id": "processId"}
_WAIT = Part(options.TurnRun, {"wait": "wait"})

_DELEGATE = Part(DelegateRequest, {
    "task": "task", "name": "name", "title": "title", "steer": "steerContent", "params": "params",
}, notes={
    "task": "the task in plain words, as the user said it.",
    "name": "process name, unique in this session; default: a slug of the task plus a short "
            "random suffix.",
    "title": "display title; default: the recipe's title.",
    "steer": "a first message for the process, queued after the task.",
    "params": "process params, overlaid on the chosen recipe's params.",
})

_SPEC = Part(ProcessSpec, {
    "recipe": "recipe", "name": "name", "title": "title", "goal": "goal",
    "steer": "steerContent", "params": "params", "parent": "parentProcessId",
}, notes={
    "recipe": "the recipe's exact name (from recipe_list or the user).",
    "title": "display title; default: the recipe's title.",
    "goal": "what the process is for; default: the steer message.",
    "steer": "the process's first message (its task), queued for its first turn.",
    "parent": "id of a parent process: it gets an event when this one closes.",
})

_TURN_NOTE = ("With wait=true the call returns once the turn has settled, its answer in "
              "result; otherwise at once while the turn runs in the background.")

TOOLS: tuple[Tool, ...] = (
    Tool("process_create_delegate",
         "Start the work for a task in plain words when you do not know which recipe fits: "
         "vance's selector picks the recipe and starts a process of it. Use this for any task "
         "that names no recipe; when you know the recipe's exact name, call process_create "
         "instead. The answer is the delegate document: decision MATCH (recipe, process) or "
         "NONE with a reason code (empty_task, no_recipes, llm_none, …). NONE is an answer, "
         "not an error: nothing fits, or the task was empty; unless fallbackOnNone is false, "
         "Slartibartfast then designs a new recipe and starts it (fallback; needs an LLM). "
         + _TURN_NOTE.replace("in result", "in process.result"),
         (_DELEGATE, Part(options.DelegateRun, {
             "fallback_on_none": "fallbackOnNone", "async_fallback": "asyncFallback",
             "wait": "wait"})),
         handlers.create_delegate),
    Tool("process_create",
         "Start a process of a recipe you name explicitly (the user named it, or you chose it "
         "from recipe_list), without the selector. When you only have a task, call "
         "process_create_delegate instead. Answers the process object. " + _TURN_NOTE,
         (_SPEC, _WAIT), handlers.create),
    Tool("process_status",
         "Show one process: its status (IDLE waits for input, RUNNING works, BLOCKED waits for "
         "the user, CLOSED with a closeReason), its latest result, turns and LLM usage.",
         (Part(options.ProcessRef, _PROCESS_ID),), handlers.status, read_only=True),
    Tool("process_result",
         "Get a process's latest answer (result; null while there is none yet). With "
         "waitSeconds, first wait that long at most for a running turn to settle.",
         (Part(options.ResultQuery, {**_PROCESS_ID, "wait_seconds": "waitSeconds"}),),
         handlers.result, read_only=True),
    Tool("process_steer",
         "Send a process a follow-up message (a question, a correction, an answer to its "
         "question); its next turn sees the whole conversation. " + _TURN_NOTE,
         (Part(options.SteerMessage, {**_PROCESS_ID, "message": "message"}), _WAIT),
         handlers.steer),
    Tool("process_list",
         "List the processes of this session (or all sessions), newest first.",
         (Part(options.ProcessQuery, {"all_sessions": "allSessions", "limit": "limit"}),),
         handlers.list_, read_only=True),
    Tool("recipe_list",
         "List the recipes the selector chooses from: name, engine, title, description. Use a "
         "name from here with process_create.",
         (Part(options.RecipeQuery, {"include_hidden": "includeHidden"}),), handlers.recipes,
         read_only=True),
    Tool("wizard_list",
         "List the prompt wizards: forms whose field values render into a well-made prompt "
         "(e.g. gremium: a panel of experts). See a wizard's fields with wizard_show.",
         (Part(options.WizardQuery, {"category": "category"}),), handlers.wizards,
         read_only=True),
    Tool("wizard_show",
         "Show a wizard's fields: name, type, label, required, choices, repeat items.",
         (Part(options.WizardRef, {"name": "name"}),), handlers.wizard, read_only=True),
    Tool("wizard_render",
         "Render a wizard's prompt from field values and return it as {prompt}. Invalid or "
         "missing values are an error naming every field (e.g. members[1].name: required). "
         "Send the prompt on with process_create_delegate as its task.",
         (Part(options.WizardValues, {"name": "name", "values": "values"}),), handlers.render,
         read_only=True),
    Tool("wizard_check",
         "Ask the LLM to check a wizard's field values with its validatorPrompt, before the "
         "prompt is sent. Returns {suggestions: [{field, suggestion}], notes}; it never fails "
         "the values (no LLM or no validatorPrompt: a note).",
         (Part(options.WizardValues, {"name": "name", "values": "values"}),),
         handlers.check_values),
)
"""Every tool, in the order ``tools/list`` shows them."""

BY_NAME: Mapping[str, Tool] = {tool.name: tool for tool in TOOLS}
"""The tools by name."""

INSTRUCTIONS = (
    "vance routes a task to the right recipe of an LLM think system and starts a process "
    "that does the work. Have a task? Call process_create_delegate. Know the recipe's name? "
    "Call process_create. Then process_result (or wait=true) gives the answer, and "
    "process_steer continues the conversation. A NONE decision is data, not a failure."
)
"""What the server tells a host when it connects (``instructions``)."""
