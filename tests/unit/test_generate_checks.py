"""The pure parts of `vera generate`: the mix, the draw of chunks, and each check."""

from __future__ import annotations

import asyncio
import random

import pytest

from vera import ConfigError
from vera._baselines import Chunk
from vera._generate import (
    Draft,
    allocate,
    answer_supported,
    is_near_duplicate,
    missing_quote,
    normalise,
    parse_mix,
    plan_tasks,
    read_draft,
)
from vera.judges import OfflineJudge

WHITEBOX = "the baselines' own parts; the generator's own parts"


def test_mix_parses_and_rejects_what_it_cannot_use() -> None:
    assert parse_mix("fact_single=0.5, unanswerable=0.5") == {
        "fact_single": 0.5,
        "unanswerable": 0.5,
    }
    assert sum(parse_mix(None).values()) == pytest.approx(1.0)
    for bad in ("facts=1", "fact_single", "fact_single=-1", "fact_single=x", "summary=0"):
        with pytest.raises(ConfigError):
            parse_mix(bad)


def test_allocation_always_sums_to_n() -> None:
    for n in (1, 7, 10, 99, 100):
        counts = allocate(n, parse_mix(None))
        assert sum(counts.values()) == n
    assert allocate(10, {"summary": 1.0}) == {"summary": 10}


def test_the_draw_is_deterministic_and_pairs_span_documents() -> None:
    chunks = [Chunk(f"doc-{d}", f"text {d} {i}", i, i + 1) for d in range(3) for i in range(4)]
    counts = {"fact_single": 5, "contradiction": 5}
    first = plan_tasks(chunks, counts, random.Random(4))
    assert first == plan_tasks(chunks, counts, random.Random(4))
    assert first != plan_tasks(chunks, counts, random.Random(5))
    for task in first:
        if task.category == "contradiction":
            assert task.chunks[0].document_id != task.chunks[1].document_id


def test_quotes_are_found_whatever_their_case_and_spacing() -> None:
    documents = {"a": normalise("The fee is\n  EUR 18,000 per month. It is due monthly.")}
    found = Draft("fact_single", "q?", "x", (("a", "the fee IS eur 18,000\tper month."),))
    assert missing_quote(found, documents) is None
    invented = Draft("fact_single", "q?", "x", (("a", "The fee is EUR 19,000."),))
    assert missing_quote(invented, documents) == "quote_not_found"
    elsewhere = Draft("fact_single", "q?", "x", (("b", "The fee"),))
    assert missing_quote(elsewhere, documents) == "unknown_document"


def test_replies_of_the_wrong_shape_are_no_draft() -> None:
    good = {"query": "q?", "answer": "a.", "citations": [{"document_id": "d", "quote": "a."}]}
    assert read_draft("fact_single", good) is not None
    assert read_draft("fact_single", "not a dict") is None
    assert read_draft("fact_single", {**good, "citations": []}) is None
    assert read_draft("fact_single", {**good, "citations": [{"quote": 3}]}) is None
    assert read_draft("fact_single", {**good, "query": ""}) is None
    assert read_draft("unanswerable", {"query": "q?", "answer": None}) is None
    decoy = read_draft("unanswerable", {"query": "q?", "answer": None, "decoy_answer": "d."})
    assert decoy is not None and decoy.answer is None and decoy.citations == ()


def test_near_duplicates_by_word_overlap() -> None:
    kept = [frozenset({"what", "is", "the", "monthly", "fee"})]
    assert is_near_duplicate("What is the monthly fee?", kept)
    assert not is_near_duplicate("When may the lease be terminated?", kept)


def test_the_judge_must_support_every_claim() -> None:
    judge = OfflineJudge()
    quote = "Customer shall pay Provider a monthly service fee of 18,000 euros."
    kept = Draft("fact_single", "Fee?", quote, (("d", quote),))
    padded = Draft("fact_single", "Fee?", quote + " The fee is refunded yearly.", (("d", quote),))
    assert asyncio.run(answer_supported(judge, kept))
    assert not asyncio.run(answer_supported(judge, padded))
