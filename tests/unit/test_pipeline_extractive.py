"""The extractive answerer: verbatim sentences, resolvable markers, abstention, determinism."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vera
from vera import Context
from vera._baselines import ABSTENTION, BM25Retriever, Chunk, ExtractiveAnswer, extractive_answer
from vera._text._citations import parse_citations, resolve_citation
from vera.judges._offline import abstains

WHITEBOX = "the baselines' own parts"

LEASE = [
    Context(text="Rent is €1,200 per month. Rent is due on the first day of each month."),
    Context(text="## Termination\nEither party may terminate this lease with ninety days' notice."),
    Context(text="The landlord maintains the roof. Pets are not allowed in the flat."),
]


def _assert_well_formed(answer: ExtractiveAnswer, chunks: list[Chunk] | list[Context]) -> None:
    """Every sentence is a verbatim span of its chunk, and each marker resolves to that chunk."""
    for sentence in answer.sentences:
        assert chunks[sentence.chunk_index].text[sentence.start : sentence.end] == sentence.text
    assert answer.text == " ".join(f"{s.text} {s.marker}" for s in answer.sentences)
    contexts = [c.to_context() if isinstance(c, Chunk) else c for c in chunks]
    marks = parse_citations(answer.text)
    assert len(marks) == len(answer.sentences)
    for mark, sentence in zip(marks, answer.sentences, strict=True):
        assert resolve_citation(mark.label, contexts) == sentence.chunk_index
        # The sentence right before the marker is the one it cites.
        assert answer.text[: mark.start].rstrip().endswith(sentence.text)


def test_answers_with_the_matching_sentence_and_its_marker() -> None:
    answer = extractive_answer("How much is the rent per month?", LEASE)
    assert not answer.abstained
    assert answer.sentences[0].text == "Rent is €1,200 per month."
    assert answer.text.startswith("Rent is €1,200 per month. [1]")
    _assert_well_formed(answer, LEASE)


def test_abstains_on_an_unrelated_query() -> None:
    answer = extractive_answer("What is the boiling point of mercury?", LEASE)
    assert answer == ExtractiveAnswer(ABSTENTION, (), abstained=True)
    assert ABSTENTION == "The provided documents do not contain information about this question."
    assert abstains(answer.text)


@pytest.mark.parametrize("query", ["", "what is it?", "the of and"])
def test_abstains_on_a_query_without_content_words(query: str) -> None:
    assert extractive_answer(query, LEASE).abstained


def test_abstains_without_chunks() -> None:
    assert extractive_answer("How much is the rent?", []).abstained


def test_keeps_the_chunks_order_and_the_limit() -> None:
    chunks = [
        Context(text="Rent is paid late sometimes."),
        Context(text="The monthly rent is due on the first and the rent is €900 monthly."),
        Context(text="Rent reviews happen yearly."),
    ]
    answer = extractive_answer("When is the monthly rent due?", chunks, max_sentences=2)
    # Index 1 covers every query word; index 0 beats index 2 on the tie; output is in order.
    assert [s.chunk_index for s in answer.sentences] == [0, 1]
    assert len(extractive_answer("rent", chunks, max_sentences=1).sentences) == 1


def test_headings_and_query_echoes_are_not_answers() -> None:
    chunks = [Context(text="## Termination\nTermination Notice.\nNotice must be in writing.")]
    answer = extractive_answer("What about termination notice?", chunks)
    assert [s.text for s in answer.sentences] == ["Notice must be in writing."]


def test_a_sentence_repeated_by_overlapping_chunks_is_cited_once() -> None:
    text = "The fee is €18,000 per month. Invoices are due in thirty days."
    first = Chunk("msa", text, 0, len(text))
    second = Chunk("msa", text[30:], 30, len(text))
    answer = extractive_answer("When are invoices due?", [first, second])
    assert [(s.text, s.chunk_index) for s in answer.sentences] == [
        ("Invoices are due in thirty days.", 0)
    ]


def test_words_naming_the_document_do_not_pick_the_sentence() -> None:
    title = "Master Services Agreement between Brightwater and Corvane"
    text = (
        "This Master Services Agreement is between Brightwater and Corvane. "
        "Customer pays a monthly fee of €18,000."
    )
    chunk = Chunk("msa", text, 0, len(text), title)
    query = "What is the monthly fee under the Brightwater-Corvane master services agreement?"
    answer = extractive_answer(query, [chunk], max_sentences=1)
    assert answer.text == "Customer pays a monthly fee of €18,000. [1]"


def test_without_citations() -> None:
    answer = extractive_answer("rent per month", LEASE, cite=False)
    assert "[" not in answer.text
    assert answer.text == " ".join(s.text for s in answer.sentences)


def test_is_deterministic() -> None:
    query = "Who maintains the roof, and are pets allowed?"
    assert extractive_answer(query, LEASE) == extractive_answer(query, list(LEASE))


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"max_sentences": 0}, "max_sentences"),
        ({"max_sentences": True}, "max_sentences"),
        ({"min_overlap": -0.1}, "min_overlap"),
        ({"min_overlap": 1.5}, "min_overlap"),
    ],
)
def test_arguments_are_validated(kwargs: dict[str, float], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        extractive_answer("rent", LEASE, **kwargs)  # type: ignore[arg-type]


_WORD = st.sampled_from(["rent", "fee", "roof", "pets", "notice", "the", "is", "30", "days"])
_SENTENCE = st.builds(
    lambda words, end: " ".join(words).capitalize() + end,
    st.lists(_WORD, min_size=1, max_size=8),
    st.sampled_from([".", "!", "?", ""]),
)
_CHUNK_TEXT = st.lists(_SENTENCE, min_size=1, max_size=5).map(" ".join)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(_CHUNK_TEXT, max_size=5),
    st.lists(_WORD, max_size=5).map(" ".join),
    st.integers(min_value=1, max_value=4),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_output_is_only_copied_sentences(
    texts: list[str], query: str, max_sentences: int, min_overlap: float
) -> None:
    chunks = [Context(text=t) for t in texts]
    answer = extractive_answer(query, chunks, max_sentences=max_sentences, min_overlap=min_overlap)
    if answer.abstained:
        assert answer.text == ABSTENTION and answer.sentences == ()
        return
    assert 1 <= len(answer.sentences) <= max_sentences
    assert all(s.overlap >= min_overlap and s.overlap > 0 for s in answer.sentences)
    positions = [(s.chunk_index, s.start) for s in answer.sentences]
    assert positions == sorted(positions)
    _assert_well_formed(answer, chunks)


def test_on_the_legal_corpus() -> None:
    dataset = vera.load_dataset("legal")
    retriever = BM25Retriever.from_documents(dataset.documents)
    for sample in dataset:
        chunks = [hit.chunk for hit in retriever.search(sample.query, top_k=3)]
        answer = extractive_answer(sample.query, chunks)
        if answer.abstained:
            assert abstains(answer.text)
        else:
            _assert_well_formed(answer, chunks)
        if sample.unanswerable:
            assert answer.abstained, sample.id
