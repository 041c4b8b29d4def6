"""Text utilities shared by judges, metrics and pipelines: no model, only rules over strings.

- `split_units`: sentence units with exact character spans.
- `parse_citations` and friends: citation markers, what they resolve to and which claim they back.
- `abstains`: whether a response declines to answer from its sources.

This layer sits just above `vera.types` and imports nothing else of VERA (an import contract
in pyproject.toml checks it), so metrics and judges can both use it without importing each
other.
"""

from vera.text._abstention import abstains, is_about_sources
from vera.text._citations import (
    CitationMark,
    attach_citations,
    parse_citations,
    resolve_citation,
    strip_citations,
)
from vera.text._lexicon import ABBREVIATIONS, NEVER_FINAL_ABBREVIATIONS, STOPWORDS
from vera.text._segment import Unit, split_units

__all__ = [
    "ABBREVIATIONS",
    "NEVER_FINAL_ABBREVIATIONS",
    "STOPWORDS",
    "CitationMark",
    "Unit",
    "abstains",
    "attach_citations",
    "is_about_sources",
    "parse_citations",
    "resolve_citation",
    "split_units",
    "strip_citations",
]
