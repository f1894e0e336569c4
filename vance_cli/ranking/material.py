"""Material: the pasted or quoted text a request works on, which is not the request.

"Summarise this article: <an article that talks about percentages>" asks for
a summary, whatever the article says; "Schreib mir eine Erörterung zum Thema
'Sollten Handys an Schulen verboten werden?'" asks for an essay, and the
quoted question is its topic. Rule (docs/delegate.md, "Offline selector"):
the words of material are no evidence — not for the trigger fast path, not
for the ranking. Material is:

- a quoted passage of ``MATERIAL_WORDS`` words or more (straight or curly
  double quotes, German and French quotes, curly single quotes, and straight
  single quotes that stand apart from words, so an apostrophe opens nothing);
- a fenced code block (three backticks);
- every line after a request line that ends with a colon ("tl;dr this
  thread pls:", "Turn these notes into a post:"); a line of fewer than
  ``BLOCK_WORDS`` words ("Context:") is a heading, not a request.

Invariant: ``request`` keeps the text's length (material becomes spaces), so
an offset into it is an offset into the task.
"""

from __future__ import annotations

import re

from vance_cli.base.patterns import Lazy

MATERIAL_WORDS = 3
"""Fewest words in quotes that are material rather than a quoted word or name
("Was bedeutet 'Idempotenz'?" keeps its word; a quoted title or sentence is a topic)."""

BLOCK_WORDS = 3
"""Fewest words on a line ending with a colon for the lines after it to be material: a
request ("Summarise this thread:"), not a heading ("Context:")."""

_QUOTES = [("\"", "\""), ("\u201c", "\u201d"), ("\u201e", "\u201c"), ("\u00ab", "\u00bb"),
           ("\u00bb", "\u00ab"), ("\u2018", "\u2019")]
_QUOTED = Lazy("|".join(
    rf"(?<!\w){re.escape(a)}[^{re.escape(b)}\n]*(?:\n[^{re.escape(b)}\n]+)*{re.escape(b)}"
    for a, b in _QUOTES) + r"|(?<!\w)'(?:[^'\n]|(?<=\w)'(?=\w))+'(?!\w)")
_FENCE = Lazy(r"```.*?(?:```|\Z)", re.DOTALL)
_QUOTE_OPENERS = "\"'" + "".join(a for a, _b in _QUOTES)
_BLOCK = re.compile(r":[ \t]*\n(?=\s*\S)")
_WORD = re.compile(r"\w+")
_VISIBLE = re.compile(r"\S")


def _blank(text: str) -> str:
    return _VISIBLE.sub(" ", text)


def request(task: str) -> str:
    """Return ``task`` with its material (see the module docstring) blanked out by spaces.

    Args:
        task: the task text (or the part of it the analysis reads).

    Returns:
        A text of the same length: the request, material replaced by spaces.
    """
    text = task
    if "```" in text:
        text = _FENCE.re.sub(lambda m: _blank(m.group()), text)
    if any(quote in text for quote in _QUOTE_OPENERS):
        text = _QUOTED.re.sub(lambda m: _blank(m.group()) if len(_WORD.findall(m.group())) >=
                              MATERIAL_WORDS else m.group(), text)
    for block in _BLOCK.finditer(text):
        line = text[text.rfind("\n", 0, block.start()) + 1:block.start()]
        if len(_WORD.findall(line)) >= BLOCK_WORDS:
            return text[:block.end()] + _blank(text[block.end():])
    return text
