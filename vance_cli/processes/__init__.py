"""Processes: the model, records, lifecycle, events, workers and the session root."""

from __future__ import annotations
