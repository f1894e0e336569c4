"""Lexical ranking of recipes for a task: words, stems and field-weighted BM25."""

from __future__ import annotations
