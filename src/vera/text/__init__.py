"""Text utilities shared by judges, metrics and pipelines: no model, only rules over strings.

- `vera.text.segment`: sentence units with exact character spans.
- `vera.text.citations`: citation markers, what they resolve to and which claim they back.
- `vera.text.abstention`: whether a response declines to answer from its sources.

This layer sits just above `vera.types` and imports nothing else of VERA (an import contract
in pyproject.toml checks it), so metrics and judges can both use it without importing each
other.
"""
