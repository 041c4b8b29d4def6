"""A column that was probably meant to be read: the contexts under a name VERA does not know.

Renamed `retrieved_contexts` to `docs`, a dataset gives every sample no contexts; every
claim is then NO_EVIDENCE and every score 0, which looks like a result. Before a run judges
anything, `unread_contexts_column` finds that case and names the column to map.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vera.datasets._source import SampleSource

__all__ = ["unread_contexts_column"]


def _is_text(value: Any) -> bool:
    """A string, or a list of strings or of `{"text": ...}` objects: what contexts look like."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | tuple) and value:
        return all(
            isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("text"), str))
            for item in value
        )
    return False


def unread_contexts_column(source: SampleSource, limit: int | None = None) -> str | None:
    """The first column VERA did not read (one of the source's `unrecognised_fields`) that
    holds text, when none of the (first `limit`) samples has contexts; None as soon as one
    sample has contexts, or when no such column exists.

    Only samples with a response count: a dataset without responses needs a pipeline, which
    brings its own contexts. Stops at the first sample with contexts, so a dataset that has
    them costs one row."""
    found: str | None = None
    for sample in itertools.islice(source, limit):
        if sample.contexts:
            return None
        if found is None and sample.response is not None:
            # Read after each sample: every pass starts the source's set afresh and fills it.
            unread = source.unrecognised_fields
            found = next(
                (k for k, v in sample.metadata.items() if k in unread and _is_text(v)), None
            )
    return found
