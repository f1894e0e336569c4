"""Budget ceilings in config: a recipe cannot exceed them; the refusal names which."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from vance_cli.base.config import load_settings
from vance_cli.processes.model import ProcessSpec
from vance_cli.processes.records import create_process
from vance_cli.workspace import Workspace


@pytest.fixture()
def ws(vance_home: object) -> Iterator[Workspace]:
    workspace = Workspace(load_settings())
    yield workspace
    workspace.close()


@pytest.mark.parametrize(("budget", "named"), [
    ({"turnSeconds": 1e8}, "params.budget.turnSeconds 1e+08 is over the ceiling of 3600"
                           " (budget.max_turn_seconds)"),
    ({"tokens": 10**8}, "params.budget.tokens 1e+08 is over the ceiling of 5e+06"
                        " (budget.max_tokens)"),
    ({"llmCalls": 201}, "params.budget.llmCalls 201 is over the ceiling of 200"
                        " (budget.max_llm_calls)"),
], ids=["turnSeconds", "tokens", "llmCalls"])
def test_a_budget_over_its_ceiling_is_refused_naming_the_ceiling(
        ws: Workspace, budget: dict[str, float], named: str) -> None:
    """Issue 26 item 4: a generated recipe with turnSeconds 1e8 was accepted and started."""
    from vance_cli.base.errors import InputError

    with pytest.raises(InputError) as info:
        create_process(ws, ProcessSpec(recipe="quick-lookup", name="big",
                                       params={"budget": budget}))
    assert named in info.value.message
    assert create_process(ws, ProcessSpec(recipe="quick-lookup", name="fits",
                                          params={"budget": {"turnSeconds": 3600}}))
