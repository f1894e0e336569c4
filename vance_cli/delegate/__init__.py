"""process_create_delegate: the selector decides, a MATCH starts a process; batch delegation."""

from __future__ import annotations
