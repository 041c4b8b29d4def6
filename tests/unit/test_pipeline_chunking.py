"""Chunking: exact spans, whole sentences, bounded size, overlap, full coverage."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vera
from vera import Context
from vera._baselines import Chunk, chunk_corpus, chunk_document, sentence_spans
from vera._text._citations import resolve_citation
from vera.judges._offline import split_units

WHITEBOX = "the baselines' own parts"

_WORDS = st.sampled_from(
    ["fee", "Provider", "shall", "pay", "the", "30", "days", "U.S.", "e.g.", "Dr.", "notice"]
)
_SENTENCE = st.builds(
    lambda words, end: " ".join(words) + end,
    st.lists(_WORDS, min_size=1, max_size=12),
    st.sampled_from([".", "!", "?", ":", "", "..."]),
)
_BLOCK = st.sampled_from(
    [
        "# Heading",
        "- a bullet item",
        "| a | table |",
        "```\ncode block line\n```",
        "---",
        "x" * 150,  # one word longer than most sizes
        "   ",
        "1. Parties. This Agreement starts now.",
    ]
)
_GLUE = st.sampled_from([" ", "\n", "\n\n", "  ", "\t", ""])
_TEXT = st.one_of(
    st.lists(st.tuples(st.one_of(_SENTENCE, _BLOCK), _GLUE), max_size=25).map(
        lambda parts: "".join(piece + glue for piece, glue in parts)
    ),
    st.text(max_size=300),
)


@st.composite
def _size_overlap(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(min_value=1, max_value=250))
    return size, draw(st.integers(min_value=0, max_value=size - 1))


def _doc(text: str) -> Context:
    return Context(text=text, id="doc-a", source="Title A")


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_TEXT, _size_overlap())
def test_chunk_properties(text: str, limits: tuple[int, int]) -> None:
    size, overlap = limits
    chunks = chunk_document(_doc(text), size=size, overlap=overlap)

    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text and chunk.text == chunk.text.strip()
        assert len(chunk.text) <= size
        assert (chunk.document_id, chunk.title) == ("doc-a", "Title A")

    # Ordered, strictly advancing, overlapping by at most `overlap` characters.
    for before, after in pairwise(chunks):
        assert before.start < after.start and before.end < after.end
        assert before.end - after.start <= overlap

    # Every non-blank character is in some chunk.
    covered = [False] * len(text)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    assert all(covered[i] for i, char in enumerate(text) if not char.isspace())

    # No sentence is cut unless it alone is longer than `size`.
    for unit in split_units(text):
        if unit.end - unit.start <= size:
            assert any(c.start <= unit.start and unit.end <= c.end for c in chunks)

    assert len({c.id for c in chunks}) == len(chunks)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_TEXT, st.integers(min_value=1, max_value=120))
def test_sentence_spans_cover_text_within_limit(text: str, limit: int) -> None:
    spans = sentence_spans(text, limit=limit)
    assert all(end - start <= limit and text[start:end].strip() for start, end in spans)
    assert all(a[1] <= b[0] for a, b in pairwise(spans))
    covered = {i for start, end in spans for i in range(start, end)}
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())


def test_chunks_end_at_sentence_ends_and_overlap_by_whole_sentences() -> None:
    sentences = [f"Clause {n} sets the fee for month {n} at {n}00 euros." for n in range(1, 13)]
    text = " ".join(sentences)
    chunks = chunk_document(_doc(text), size=200, overlap=60)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.text.endswith("euros.") and chunk.text.startswith("Clause")
        assert len(chunk.text) <= 200
    for before, after in pairwise(chunks):
        shared = text[after.start : before.end]
        assert shared in sentences  # exactly one whole sentence (each is under 60 chars)


def test_zero_overlap_gives_disjoint_chunks() -> None:
    text = " ".join(f"Sentence number {n} is here." for n in range(40))
    chunks = chunk_document(_doc(text), size=100, overlap=0)
    assert all(a.end < b.start for a, b in pairwise(chunks))


def test_short_document_is_one_chunk() -> None:
    text = "\n  The fee is €18,000.  \n"
    (chunk,) = chunk_document(_doc(text), size=800, overlap=100)
    assert chunk == Chunk("doc-a", "The fee is €18,000.", 3, 22, "Title A")


def test_blank_document_has_no_chunks() -> None:
    assert chunk_document(_doc(" \n\t "), size=10, overlap=0) == []


def test_an_overlong_sentence_is_cut_at_whitespace() -> None:
    text = "word " * 30 + "end."
    chunks = chunk_document(_doc(text), size=42, overlap=10)
    assert all(len(c.text) <= 42 for c in chunks)
    assert all(not c.text.endswith("wor") for c in chunks)  # never mid-word here
    assert chunks[-1].text.endswith("end.")


@pytest.mark.parametrize(
    ("size", "overlap", "named"),
    [(0, 0, "size"), (-5, 0, "size"), (100, 100, "overlap"), (100, -1, "overlap")],
)
def test_arguments_are_validated(size: int, overlap: int, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        chunk_document(_doc("A sentence."), size=size, overlap=overlap)
    with pytest.raises(ValueError, match=named):
        chunk_corpus([], size=size, overlap=overlap)


def test_document_naming() -> None:
    by_source = chunk_document(Context(text="A fact.", source="notes.md"))
    assert by_source[0].document_id == "notes.md"
    with pytest.raises(ValueError, match="id"):
        chunk_document(Context(text="A fact."))
    corpus = chunk_corpus([Context(text="One."), Context(text="Two.", id="b")])
    assert [c.document_id for c in corpus] == ["doc-1", "b"]


def test_to_context_keeps_the_document_resolvable() -> None:
    chunk = Chunk("contract-msa", "Customer shall pay.", 120, 139, "MSA")
    context = chunk.to_context()
    assert context == Context(
        text="Customer shall pay.", id="contract-msa#120-139", source="contract-msa"
    )
    assert context.id is not None and context.id.rpartition("#")[0] == "contract-msa"
    others = [Context(text="x", id="contract-nda#0-1", source="contract-nda"), context]
    # A dataset's ground-truth citation names the document; it resolves to the chunk.
    assert resolve_citation("contract-msa", others) == 1
    assert resolve_citation("contract-msa#120-139", others) == 1


def test_legal_corpus_chunks() -> None:
    documents = vera.load_dataset("legal").documents
    chunks = chunk_corpus(documents, size=800, overlap=100)
    by_id = {d.id: d for d in documents}
    assert {c.document_id for c in chunks} == set(by_id)
    for chunk in chunks:
        assert by_id[chunk.document_id].text[chunk.start : chunk.end] == chunk.text
        assert chunk.title == by_id[chunk.document_id].source
    overlaps = [a.end - b.start for a, b in pairwise(chunks) if a.document_id == b.document_id]
    # Whole sentences of at most 100 characters are repeated; a longer last sentence is not.
    assert overlaps and all(o <= 100 for o in overlaps) and max(overlaps) > 0
