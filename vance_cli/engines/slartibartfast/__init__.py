"""Slartibartfast: the engine that writes a new recipe when no existing one fits."""

from __future__ import annotations
