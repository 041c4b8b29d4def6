"""The README fits a screen and every link in it lands (issue 40): what it no longer says
lives in a docs page it links to, so a broken link would hide that page."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown page."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_the_readme_fits_a_screen() -> None:
    assert len(README.splitlines()) <= 250


def test_every_relative_link_in_the_readme_lands() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#([^)]+))?\)", README)
    relative = [(path, anchor) for path, anchor in links if "://" not in path]
    assert len(relative) >= 20  # the README points to the docs pages rather than repeating them
    for path, anchor in relative:
        target = ROOT / path
        assert target.is_file(), f"README links to {path}, which does not exist"
        if anchor:
            assert anchor in _anchors(target), f"README links to {path}#{anchor}: no such heading"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", README))
    assert pages - linked == set(), "docs pages the README does not link to"
