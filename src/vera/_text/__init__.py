"""Text utilities shared by judges, metrics and pipelines: rules over strings, and language
identification on a model that ships inside its package (py3langid).

- `split_units`: sentence units with exact character spans, in any script (CJK and
  Devanagari full stops, Thai spaces, Arabic question marks).
- `read_numbers` and friends: numbers in any locale or script (`1.234,5`, `三十`, `3万`).
- `identify`: which language a text is in (ISO 639-1), see docs/languages.md.
- `parse_citations` and friends: citation markers, what they resolve to and which claim they back.
- `abstains`: whether a response declines to answer from its sources, in the offline judge's
  languages.
- `printable`: text from data with its control characters shown, never obeyed, by a terminal,
  a CI log or an XML parser.

This layer sits just above `vera._types` and imports nothing else of VERA (an import contract
in pyproject.toml checks it), so metrics and judges can both use it without importing each
other.
"""

from vera._text._abstention import abstains, is_about_sources
from vera._text._citations import (
    CitationMark,
    attach_citations,
    parse_citations,
    resolve_citation,
    strip_citations,
)
from vera._text._control import printable
from vera._text._language import guess_language, identify, language_name
from vera._text._lexicon import ABBREVIATIONS, NEVER_FINAL_ABBREVIATIONS, STOPWORDS
from vera._text._numbers import canonical_numbers, parse_number, read_numbers
from vera._text._segment import Unit, split_units

__all__ = [
    "ABBREVIATIONS",
    "NEVER_FINAL_ABBREVIATIONS",
    "STOPWORDS",
    "CitationMark",
    "Unit",
    "abstains",
    "attach_citations",
    "canonical_numbers",
    "guess_language",
    "identify",
    "is_about_sources",
    "language_name",
    "parse_citations",
    "parse_number",
    "printable",
    "read_numbers",
    "resolve_citation",
    "split_units",
    "strip_citations",
]
