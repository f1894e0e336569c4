"""The engine catalog: which engines exist, what each is for, and its atomic reload."""

from __future__ import annotations
