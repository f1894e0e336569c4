"""Quick-start cards: the top wizards of a tenant, grouped by category (docs/shell.md).

Rules:
- A use is one wizard prompt rendered for a person (``wizard run``, ``wizard
  open``, the shell's ``/wizard``), recorded per tenant in ``wizard_uses``.
- "Top" is most used in this tenant first; ties and unused wizards keep the
  listing's order (``group_wizards``: categories, then titles), which is the
  bundled order when nothing was used yet. ``availableIn`` applies.
- At most ``MAX_CARDS`` cards; they are grouped by category in the order the
  categories first appear, and numbered 1, 2, … in the order shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vance_cli.base.clock import utc_now
from vance_cli.base.records import frozen
from vance_cli.documents.cascade import Kind
from vance_cli.wizards.listing import group_wizards
from vance_cli.wizards.loader import load_cascade

if TYPE_CHECKING:
    from vance_cli.state.db import Database
    from vance_cli.workspace import Workspace

MAX_CARDS = 8
"""Cards shown at most."""


@frozen
class Card:
    """One card: the key that opens it, and what it shows."""

    key: str
    name: str
    title: str
    category: str
    description: str
    uses: int


def record_use(db: Database, tenant: str, wizard: str) -> None:
    """Record that ``wizard``'s prompt was rendered for a person in ``tenant``."""
    with db.transaction() as conn:
        conn.execute("INSERT INTO wizard_uses (tenant, wizard, used_at) VALUES (?, ?, ?)",
                     (tenant, wizard, utc_now()))


def use_counts(db: Database, tenant: str) -> dict[str, int]:
    """Return ``{wizard: uses}`` of ``tenant``."""
    rows = db.query("SELECT wizard, count(*) FROM wizard_uses WHERE tenant = ? GROUP BY wizard",
                    (tenant,))
    return {str(row[0]): int(row[1]) for row in rows}


def top_cards(ws: Workspace, limit: int = MAX_CARDS) -> list[Card]:
    """Return the cards of the shell's empty session, numbered in the order shown."""
    lang = ws.settings.lang
    report = load_cascade(ws.cascade(Kind.WIZARDS), ws.wizard_cache)
    listed = [(group.category, w) for group in group_wizards(report.wizards, ws.availability_id,
                                                             lang, None)
              for w in group.wizards]
    uses = use_counts(ws.db, ws.settings.tenant)
    ranked = sorted(enumerate(listed), key=lambda item: (-uses.get(item[1][1].name, 0), item[0]))
    chosen = [pair for _, pair in ranked[:limit]]
    categories: list[str] = []
    for category, _ in chosen:
        if category not in categories:
            categories.append(category)
    ordered = [pair for category in categories for pair in chosen if pair[0] == category]
    return [Card(str(number), w.name, w.spec.title_in(lang), category, w.spec.description_in(lang),
                 uses.get(w.name, 0))
            for number, (category, w) in enumerate(ordered, start=1)]
