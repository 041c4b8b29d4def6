"""Text utilities shared by judges, metrics and pipelines: rules over strings, and language
identification on a model that ships inside its package (py3langid).

- `vera.text.segment`: sentence units with exact character spans, in any script (CJK and
  Devanagari full stops, Thai spaces, Arabic question marks).
- `vera.text.numbers`: numbers in any locale or script (`1.234,5`, `三十`, `3万`).
- `vera.text.language`: which language a text is in (ISO 639-1), see docs/languages.md.
- `vera.text.citations`: citation markers, what they resolve to and which claim they back.
- `vera.text.abstention`: whether a response declines to answer from its sources, in the
  offline judge's languages.

This layer sits just above `vera.types` and imports nothing else of VERA (an import contract
in pyproject.toml checks it), so metrics and judges can both use it without importing each
other.
"""
