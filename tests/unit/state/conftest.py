"""Every test here runs on both stores: SQLite, and PostgreSQL when a server is given."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _on_both_stores(state_store: str) -> str:
    """Run each test on the store of this run (``tests/conftest.py`` ``state_store``)."""
    return state_store
