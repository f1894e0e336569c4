"""The quick-start cards of an empty shell session, drawn with Rich (docs/shell.md).

Each category is a row of panels; a panel shows the key that opens the card,
the wizard's title, its name and its description's first sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from vance_cli.cli import output

if TYPE_CHECKING:
    from vance_cli.wizards.cards import Card

TEXTS = {"en": ("Quick start — type a number to open a wizard, or just type a task:",
                "(uncategorised)", "/wizards shows these cards again"),
         "de": ("Schnellstart — eine Zahl öffnet einen Wizard, oder einfach eine Aufgabe tippen:",
                "(ohne Kategorie)", "/wizards zeigt diese Karten wieder")}
"""Heading, the name of the empty category, and the footer, per language."""


def _first_sentence(text: str, limit: int = 90) -> str:
    sentence = text.split(". ", maxsplit=1)[0].strip()
    if len(sentence) <= limit:
        return sentence
    return sentence[:limit].rsplit(" ", 1)[0] + " …"


def print_cards(cards: Sequence[Card], lang: str) -> None:
    """Draw ``cards`` grouped by category on stderr (nothing when there are none)."""
    from rich.columns import Columns
    from rich.panel import Panel
    from rich.text import Text

    if not cards:
        return
    heading, uncategorised, footer = TEXTS["de" if lang.lower().startswith("de") else "en"]
    console = output.err_console()
    console.print(Text(heading, style="bold"))
    categories: list[str] = []
    for card in cards:
        if card.category not in categories:
            categories.append(card.category)
    for category in categories:
        console.print(Text(category or uncategorised, style="bold cyan"))
        panels = []
        for card in (c for c in cards if c.category == category):
            body = Text()
            body.append(f"[{card.key}] ", style="bold magenta")
            body.append(card.title, style="bold")
            body.append(f"\n{card.name}", style="dim")
            if card.description:
                body.append(f"\n{_first_sentence(card.description)}")
            panels.append(Panel(body, width=36))
        console.print(Columns(panels))
    console.print(Text(footer, style="dim"))
