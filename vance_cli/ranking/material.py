r"""Material: the pasted or quoted text a request works on, which is not the request.

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
  ``BLOCK_WORDS`` words ("Context:") is a heading, not a request;
- every paragraph after a first one that points at it (*this*, *these*,
  *the following*, *below*, *dies*, *folgende* …: "Can you give me the
  gist of this?" and an empty line, then the text);
- pasted code: a line after the first that looks like source code
  (``code_line``), and the lines between two such lines ("What does this
  script do?", then lines such as ``for f in *.csv; do`` and ``done``); and
  code in backticks within a line ("what this line does: `const x =
  arr.reduce((a, b) => a + b, 0);`"), not a word in backticks (a name); and
  within a line, an SQL statement written with its keywords in capitals
  ("what does this query do? SELECT name FROM emp …") or a regular expression
  (a piece with ``\d``, ``\w`` … or a ``{5}`` count: "fix it: ^\d{5}").

Pasted code is also evidence: ``pasted_code`` says whether the task holds
any (in the material above too), so the reading can name it ``code``.

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
_LINE = re.compile(r"[^\n]*")
_INLINE = re.compile(r"`([^`\n]+)`")
_PARAGRAPH = re.compile(r"\n[ \t]*\n(?=\s*\S)")
_POINTS = Lazy(r"\b(?:this|these|following|below|beneath|here|dies\w*|folgende\w*|unten|"
               r"hier)\b", re.IGNORECASE)
TEXT_NOUNS = ("text", "paragraph", "paragraphs", "sentence", "sentences", "passage", "email",
              "e-mail", "mail", "message", "letter", "note", "tweet", "post",
              "absatz", "satz", "sätze", "nachricht", "brief")
"""Names of a short text: a request that points at one and goes on after a colon on the same
line ("Fix the typo in *this sentence*: …") gives the text right there."""

_POINTED = Lazy(r"^[^\n:]*\b(?:this|these|the following|that|dies\w*|folgende\w*)\s+(?:\w+\s+)?"
                r"(?:" + "|".join(TEXT_NOUNS) + r")\b[^\n:]*:(?=[ \t]+\S)", re.IGNORECASE)
_CODE_LINE = Lazy(
    # a keyword that opens a statement (lower case, as code writes it), then a bracket, a
    # semicolon, = or $ on the line
    r"^\s*(?:def|class|function|func|fn|return|import|const|let|var|public|private|"
    r"static|void|if|elif|else|for|foreach|while|switch|case|try|catch|except|raise|throw|"
    r"echo|printf?|package|using|struct|enum|interface|async|await|SELECT|INSERT|UPDATE)\b"
    r"\s.*[(){}\[\];=$]"
    # an operator that prose does not use
    r"|==|!=|=>|->|::|&&|\|\||\+=|:=|>>|\$[A-Za-z_({]"
    # a statement's end: a brace, a semicolon, or a colon after a closing bracket
    r"|[{};]\s*$|\)\s*:\s*$"
    # a call with its arguments: name(…) right after the name, as code writes it
    r"|\b[A-Za-z_][\w.]*\([^()\s]*(?:\s*,\s*[^()\s]*)*\)\s*$",
    re.MULTILINE)


def _blank(text: str) -> str:
    return _VISIBLE.sub(" ", text)


def request(task: str) -> str:
    """Return ``task`` with its material (see the module docstring) blanked out by spaces.

    Args:
        task: the task text (or the part of it the analysis reads).

    Returns:
        A text of the same length: the request, material replaced by spaces.
    """
    text = _without_code(task)
    if "```" in text:
        text = _FENCE.re.sub(lambda m: _blank(m.group()), text)
    if any(quote in text for quote in _QUOTE_OPENERS):
        text = _QUOTED.re.sub(lambda m: _blank(m.group()) if len(_WORD.findall(m.group())) >=
                              MATERIAL_WORDS else m.group(), text)
    if ":" in text:
        pointed = _POINTED.re.search(text)
        if pointed is not None:  # "Make this paragraph shorter: The committee met …"
            end = text.find("\n", pointed.end())
            end = len(text) if end < 0 else end
            text = text[:pointed.end()] + _blank(text[pointed.end():end]) + text[end:]
    for block in _BLOCK.finditer(text):
        line = text[text.rfind("\n", 0, block.start()) + 1:block.start()]
        if len(_WORD.findall(line)) >= BLOCK_WORDS:
            return text[:block.end()] + _blank(text[block.end():])
    paragraph = _PARAGRAPH.search(text)
    if paragraph is not None:
        first = text[:paragraph.start()]
        if len(_WORD.findall(first)) >= BLOCK_WORDS and _POINTS.re.search(first) is not None:
            return text[:paragraph.end()] + _blank(text[paragraph.end():])
    return text


def code_line(line: str) -> bool:
    """True for a line that looks like source code rather than prose.

    One of: a statement keyword in lower case (``def``, ``return``, ``for``,
    ``if`` …) with a bracket, semicolon, ``=`` or ``$`` on the line (not a
    colon: "From: Anna" heads an e-mail); an operator prose
    does not use (``==``, ``=>``, ``->``, ``&&``, ``>>``, a shell variable
    ``$f`` …); a line
    that ends a statement (``{``, ``}``, ``;``, ``):``); a line ending with a
    call written as code (``len(xs)``, ``avg(xs, 2)``).

    Args:
        line: one line of a task, without its line break.
    """
    return _CODE_LINE.re.search(line) is not None


_INLINE_CODE = Lazy(
    # an SQL statement as SQL is written, its keywords in capitals ("SELECT d.name … FROM emp")
    r"\bSELECT\s[^\n]*?\bFROM\b[^\n]*|\b(?:INSERT\s+INTO|DELETE\s+FROM|CREATE\s+TABLE)\s"
    r"[^\n]*"
    # a regular expression: a piece with a class escape (\d, \w, \s …) or a {n} count
    r"|(?<!\S)\S*(?:\\[dwsbDWSB]|[\]\w)]\{\d+(?:,\d*)?\})\S*", needs=("select", "into", "from",
                                                                      "table", "\\", "{"))


def _code_spans(task: str) -> list[tuple[int, int]]:
    """Return the spans of pasted code (see the module docstring)."""
    inline = ([m.span() for m in _INLINE.finditer(task) if code_line(m.group(1))]
              if "`" in task else [])
    if _INLINE_CODE.may_match(task):
        inline += [m.span() for m in _INLINE_CODE.re.finditer(task)]
    return inline + _line_spans(task)


def _line_spans(task: str) -> list[tuple[int, int]]:
    """Return the span from the first code line after the first line to the last, if any."""
    if "\n" not in task:
        return []
    spans: list[tuple[int, int]] = []
    first = True
    for line in _LINE.finditer(task):
        if first:
            first = False
            continue
        if line.group().strip() and code_line(line.group()):
            spans.append(line.span())
    return [(spans[0][0], spans[-1][1])] if spans else []


def pasted_code(task: str) -> bool:
    """True when ``task`` holds pasted code (a line after its first, or code in backticks).

    Code is what ``code_line`` accepts.

    Args:
        task: the task text (or the part of it the analysis reads).
    """
    return bool(_code_spans(task))


def _without_code(task: str) -> str:
    for start, end in _code_spans(task):
        task = task[:start] + _blank(task[start:end]) + task[end:]
    return task
