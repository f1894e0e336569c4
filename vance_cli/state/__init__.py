"""The SQLite state database: connection, migrations, and all of vance's SQL."""

from __future__ import annotations
