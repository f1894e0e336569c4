"""Slartibartfast: the engine that writes a new recipe when no existing one fits.

``ENGINE`` (in ``registration``) is what the runtime sees: a whole-process run
under its cutoff, and a close hook that brings the run's audit to its end.
"""

from __future__ import annotations
