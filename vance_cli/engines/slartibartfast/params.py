"""Slartibartfast's params schema (docs/engines.md "slartibartfast")."""

from __future__ import annotations

from pydantic import ConfigDict

from vance_cli.recipes.params import Common


class SlartibartfastParams(Common):
    """slartibartfast: its run (set by vance: ``runId``, ``auditFile``, the cutoff)."""

    model_config = ConfigDict(extra="allow")
