"""Foundations every layer uses: errors, paths, settings, YAML, text input, wording."""

from __future__ import annotations
