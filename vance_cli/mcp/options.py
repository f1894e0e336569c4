"""The MCP tools' own options: what the command line takes as flags, as values.

The core values a tool passes on (``DelegateRequest``, ``ProcessSpec``)
come from the core; these hold the flags around them (``--wait``,
``--no-fallback``, ``--all`` …) and the positional arguments of the read
commands. Their ``Attributes:`` docstrings are the argument descriptions a
calling model reads (``mcp/arguments.py``), so they speak to that caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from vance_cli.base.records import frozen


@frozen
class DelegateRun:
    """What ``process_create_delegate`` does after the decision (``vance delegate`` flags).

    Attributes:
        fallback_on_none: when no recipe fits (NONE), let Slartibartfast design a new
            recipe and start a process of it (needs an LLM); false skips this step.
        async_fallback: run Slartibartfast in the background and answer at once
            (``fallback.outcome`` PENDING); its new recipe is then not started.
        wait: wait until the started process's first turn has settled and return its
            answer in ``process.result``; false returns at once while the turn runs
            in the background (then call process_result).
    """

    fallback_on_none: bool = True
    async_fallback: bool = False
    wait: bool = False


@frozen
class TurnRun:
    """Whether a tool that gives a process input waits for its turn (``--wait``).

    Attributes:
        wait: wait until the process's turn has settled and return its answer in
            ``result``; false returns at once while the turn runs in the background
            (then call process_result).
    """

    wait: bool = False


@frozen
class ProcessRef:
    """One process (``vance process show ID``).

    Attributes:
        process_id: the process id, or a unique prefix of at least 4 characters.
    """

    process_id: str


@frozen
class ResultQuery:
    """A process's latest answer (``vance process wait ID --timeout S``, then ``result``).

    Attributes:
        process_id: the process id, or a unique prefix of at least 4 characters.
        wait_seconds: first wait up to this many seconds for a running turn to
            settle; null or 0 answers at once.
    """

    process_id: str
    wait_seconds: float | None = None


@frozen
class SteerMessage:
    """A follow-up message for a process (``vance process steer ID TEXT``).

    Attributes:
        process_id: the process id, or a unique prefix of at least 4 characters.
        message: the message; the process's next turn sees it with the whole
            conversation so far.
    """

    process_id: str
    message: str


@frozen
class ProcessQuery:
    """Which processes to list (``vance process list`` flags).

    Attributes:
        all_sessions: every session of the tenant, not only this server's session.
        limit: at most this many, newest first; null lists all.
    """

    all_sessions: bool = False
    limit: int | None = None


@frozen
class RecipeQuery:
    """Which recipes to list (``vance recipe list --all``).

    Attributes:
        include_hidden: also the recipes the selector never picks (names starting
            with `_`, such as generated `_slart/…` ones, and internal ones).
    """

    include_hidden: bool = False


@frozen
class WizardQuery:
    """Which wizards to list (``vance wizard list --category``).

    Attributes:
        category: only this category (in any of its languages); null lists all.
    """

    category: str | None = None


@frozen
class WizardRef:
    """One wizard (``vance wizard show NAME``).

    Attributes:
        name: the wizard's name, as wizard_list gives it (e.g. `gremium`).
    """

    name: str


@frozen
class WizardValues:
    """A wizard and its field values (``vance wizard render NAME --values FILE``).

    Attributes:
        name: the wizard's name, as wizard_list gives it (e.g. `gremium`).
        values: field name → value, as wizard_show describes the fields (a repeat
            field takes a list of objects, a multi_select a list of choice values).
    """

    name: str
    values: Mapping[str, Any] = field(default_factory=dict)
