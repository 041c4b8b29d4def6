"""Chunking: documents cut into overlapping passages along sentence boundaries.

A chunk is a span of its document, never a rewrite, so `document.text[start:end]` is exactly
what a pipeline retrieves and what the judge later quotes. Chunks break between sentences
(`split_units`), so a claim's evidence is never cut in half, unless one sentence alone is
longer than the chunk size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from vera._text._segment import split_units
from vera._types import Context

DEFAULT_SIZE = 800
DEFAULT_OVERLAP = 100


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage of one document: `text == document.text[start:end]`.

    `title` is the document's title where it has one (the bundled corpora keep it in the
    document's `Context.source`).
    """

    document_id: str
    text: str
    start: int
    end: int
    title: str | None = None

    @property
    def id(self) -> str:
        """`chunk_id(document_id, start, end)`: unique within a corpus, document recoverable."""
        return chunk_id(self.document_id, self.start, self.end)

    def to_context(self) -> Context:
        """The chunk as a retrieved context: id `"{document_id}#{start}-{end}"`, source the
        document id.

        The id names the exact span (two chunks of one document never share it), and the
        document id stays recoverable from it (`id.rpartition("#")[0]`). `source` is the bare
        document id because citation metrics resolve a `[contract-msa]` label, and a dataset's
        ground-truth citations, against a context's id or source: with source set, a chunk
        answers to its document's name.
        """
        return Context(text=self.text, id=self.id, source=self.document_id)


def chunk_id(document_id: str, start: int, end: int) -> str:
    """A chunk's id: `"{document_id}#{start}-{end}"` (character offsets into the document).

    "#" reads as "fragment of" and the part after the last "#" never contains one, so
    `rpartition("#")` gives the document id back even when the id itself holds a "#".
    """
    return f"{document_id}#{start}-{end}"


def sentence_spans(text: str, *, limit: int | None = None) -> list[tuple[int, int]]:
    """Spans that cover every non-blank character of `text`, cut where sentences start.

    Each span runs from one `split_units` sentence to the start of the next, trimmed of
    whitespace, so what the segmenter skips (code blocks, rules) stays with the sentence before
    it instead of vanishing from the chunks. With `limit`, a span longer than that is cut
    further at whitespace (or anywhere, if a run has none) so no span exceeds it.
    """
    begin = _skip_space(text, 0)
    finish = len(text.rstrip())
    if begin >= finish:
        return []
    starts = [u.start for u in split_units(text) if u.start > begin]
    bounds = [begin, *starts, finish]
    spans: list[tuple[int, int]] = []
    for left, right in pairwise(bounds):
        end = _trim_end(text, left, right)
        if end > left:
            spans.extend(_cut(text, left, end, limit) if limit else [(left, end)])
    return spans


def chunk_document(
    document: Context, *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """Cut `document` into chunks of at most `size` characters, in document order.

    Chunks hold whole sentences: only a sentence longer than `size` is cut (at whitespace
    where it can be). Consecutive chunks share their last / first whole sentences, up to
    `overlap` characters, so a fact stated across a chunk boundary is whole in one of them;
    a sentence too long to fit the overlap is not repeated. Chunks are trimmed of whitespace,
    and together they cover every non-blank character of the document.

    The document is named by its `id` (else its `source`); a chunk's title is its `source`.
    """
    _check(size, overlap)
    document_id = document.id if document.id is not None else document.source
    if document_id is None:
        raise ValueError("document needs an id (or a source) to name its chunks")
    text = document.text
    spans = sentence_spans(text, limit=size)
    chunks: list[Chunk] = []
    first = 0
    while first < len(spans):
        start = spans[first][0]
        last = first
        while last + 1 < len(spans) and spans[last + 1][1] - start <= size:
            last += 1
        end = spans[last][1]
        chunks.append(Chunk(document_id, text[start:end], start, end, document.source))
        if last + 1 == len(spans):
            break
        first = _next_first(spans, first, last, size, overlap)
    return chunks


def chunk_corpus(
    documents: Iterable[Context], *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[Chunk]:
    """Chunk every document, in order. A document without id or source is named `doc-{n}`
    (1-based, as the dataset loader names them), so every chunk can be traced back."""
    _check(size, overlap)
    chunks: list[Chunk] = []
    for index, document in enumerate(documents, start=1):
        if document.id is None and document.source is None:
            document = document.model_copy(update={"id": f"doc-{index}"})
        chunks.extend(chunk_document(document, size=size, overlap=overlap))
    return chunks


def _check(size: int, overlap: int) -> None:
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be at least 0 and less than size ({size}), got {overlap}")


def _next_first(
    spans: list[tuple[int, int]], first: int, last: int, size: int, overlap: int
) -> int:
    """The first span of the next chunk: the earliest after `first` such that the spans it
    repeats fit in `overlap` and the chunk still has room for the span after `last`."""
    end = spans[last][1]
    after = spans[last + 1][1]
    for candidate in range(first + 1, last + 1):
        start = spans[candidate][0]
        if end - start <= overlap and after - start <= size:
            return candidate
    return last + 1


def _cut(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    while end - start > limit:
        cut = start + limit
        while cut > start and not text[cut].isspace():
            cut -= 1
        if cut == start:  # no whitespace in reach: cut the run itself
            cut = start + limit
        piece_end = _trim_end(text, start, cut)
        pieces.append((start, piece_end))
        start = _skip_space(text, cut)
    pieces.append((start, end))
    return pieces


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
