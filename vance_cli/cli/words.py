"""The few words the command line adds itself, in the session's language (German for ``de``).

Messages of the core and everything in ``--json`` stay English (they are
data: scripts match them); what a person reads on the terminal besides them
follows the session language (docs/configuration.md ``lang``): table
headers, "cancelled", the shell's command summaries. ``context.settings``
sets the language once the settings are resolved; before that (a usage
error) it is English.
"""

from __future__ import annotations

from collections.abc import Mapping

_LANGUAGE = ["en"]

HEADERS_DE: Mapping[str, str] = {
    "name": "Name", "recipe": "Rezept", "engine": "Engine", "status": "Status",
    "created (UTC)": "erstellt (UTC)", "session": "Sitzung", "time (UTC)": "Zeit (UTC)",
    "mode": "Modus", "decision": "Entscheidung", "recipe/reason": "Rezept/Grund",
    "model": "Modell", "task": "Aufgabe", "category": "Kategorie", "title": "Titel",
    "layer": "Ebene", "description": "Beschreibung", "wizard": "Wizard", "result": "Ergebnis",
    "purpose": "Zweck", "when to use": "wann verwenden", "not for": "nicht für",
    "field": "Feld", "type": "Typ", "label": "Beschriftung", "required": "Pflicht",
    "default": "Vorgabe", "details": "Details", "key": "Schlüssel", "value": "Wert",
    "origin": "Herkunft", "path": "Pfad", "turn": "Zug", "role": "Rolle", "kind": "Art",
    "time": "Zeit", "tokens": "Tokens", "text": "Text", "command": "Befehl",
    "what it does": "was er tut",
}
"""Table headers in German; the English names stay the columns' identity in the code."""

WORDS_DE: Mapping[str, str] = {
    "cancelled": "abgebrochen",
    "Anything else is a task for the selector, as 'vance delegate'.":
        "Alles andere ist eine Aufgabe für den Selector, wie bei 'vance delegate'.",
}
"""Other words the command line shows itself, in German."""


def set_language(lang: str) -> None:
    """Use ``lang`` (``de…``: German, else English) for the words shown from now on."""
    _LANGUAGE[0] = "de" if lang.lower().startswith("de") else "en"


def german() -> bool:
    """True when the session language is German."""
    return _LANGUAGE[0] == "de"


def header(column: str) -> str:
    """Return a table header as shown in the session language."""
    return HEADERS_DE.get(column, column) if german() else column


def word(text: str) -> str:
    """Return one of the command line's own phrases in the session language."""
    return WORDS_DE.get(text, text) if german() else text
