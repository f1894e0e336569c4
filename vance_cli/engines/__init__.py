"""Engines: one package or module per engine, each registered in code."""

from __future__ import annotations
