"""The settings that make a command's scope: whose documents and state it sees."""

from __future__ import annotations

SCOPE_KEYS = ("tenant", "project", "user", "session", "lang")
"""Settings a launcher passes to a background worker as flags, so the worker resolves
exactly what the command resolved (``--tenant``, ``--project`` …)."""
