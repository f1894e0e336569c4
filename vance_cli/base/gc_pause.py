"""Bulk loads without the cyclic garbage collector's passes (docs/decisions/0018-gc-pause.md).

A listing parses a thousand documents; each makes thousands of short-lived
objects (YAML nodes, template tokens) and leaves a few hundred behind. The
collector runs every 700 allocations and, as the survivors pile up, walks all
of them again: about a sixth of a cold ``vance wizard list`` over 1,005
wizards. What a load makes holds no reference cycles worth collecting, and
reference counting frees it as before; so the collector waits until the load
is done. It is never frozen (``gc.freeze``): a long-lived ``vance shell`` or
``vance mcp`` keeps collecting what it leaves afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; on again after, if it was on before.

    Threads: another thread's pause may overlap; the collector is on again once
    the pause that found it on has ended (it may then run during the other one).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
