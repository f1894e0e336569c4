"""Recipes: named, reusable workflows bound to an engine; loading and the selector's inventory."""

from __future__ import annotations
