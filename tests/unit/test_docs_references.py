"""Every ``docs/…`` reference in the code points at a page and heading that exist.

The code cites its rules as ``docs/page.md``, ``docs/page.md#anchor`` or
``docs/page.md "Heading"`` (``docs/decisions/0012`` names a record by its number).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "vance_cli"

_REFERENCE = re.compile(
    r"docs/(?P<path>[A-Za-z0-9_/.-]*[A-Za-z0-9_-])(?:#(?P<anchor>[A-Za-z0-9_-]+))?"
    r"(?:,?\s+\"(?P<heading>[^\"\n]+)\")?")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def _headings(page: Path) -> list[str]:
    """Return the heading texts of a Markdown page, outside fenced code."""
    found, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            found.append(match.group(2).strip())
    return found


def _slug(heading: str) -> str:
    """Return a heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _plain(heading: str) -> str:
    return heading.replace("`", "").strip().lower()


def _page(path: str) -> Path | None:
    """Return the docs page a reference names: exact, with ``.md``, or by a record's number."""
    for candidate in (ROOT / "docs" / path, ROOT / "docs" / f"{path}.md"):
        if candidate.is_file():
            return candidate
    matches = sorted((ROOT / "docs").glob(f"{path}-*.md"))
    return matches[0] if len(matches) == 1 else None


def broken_references(files: list[Path]) -> list[str]:
    """Return ``file:line: reference: why`` for each reference that points nowhere.

    Args:
        files: the Python files to read.
    Returns:
        One line per broken reference; empty when all hold.
    """
    broken: list[str] = []
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            for match in _REFERENCE.finditer(line):
                name = file.relative_to(ROOT) if file.is_relative_to(ROOT) else file.name
                where = f"{name}:{number}: {match.group(0)}"
                page = _page(match.group("path").rstrip("."))
                if page is None:
                    broken.append(f"{where}: no page")
                    continue
                headings = _headings(page)
                anchor, heading = match.group("anchor"), match.group("heading")
                if anchor and anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{where}: no heading '#{anchor}' in {page.name}")
                if heading and _plain(heading) not in {_plain(h) for h in headings}:
                    broken.append(f"{where}: no heading '{heading}' in {page.name}")
    return broken


def test_every_docs_reference_in_the_code_points_at_a_page_and_heading() -> None:
    files = sorted(CODE.rglob("*.py"))
    assert len(files) > 50
    assert broken_references(files) == []


def test_a_broken_reference_is_found(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text('"""Rule: docs/delegate.md "No such heading"; docs/nowhere.md;\n'
                      'docs/delegate.md#no-anchor; docs/delegate.md "Batch"."""\n',
                      encoding="utf-8")
    found = broken_references([source])
    assert [line.split(": ", 2)[-1] for line in found] == [
        "no heading 'No such heading' in delegate.md", "no page",
        "no heading '#no-anchor' in delegate.md"]
