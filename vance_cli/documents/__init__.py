"""Documents and the cascade of layers they are looked up in, and the parsed-document cache."""

from __future__ import annotations
