"""Dense retrieval with a fake embedder (a bag of words over a fixed vocabulary, written for
these tests: no model is downloaded)."""

import sys

import pytest

import vera
from vera import Context, Verdict, build_baseline
from vera._baselines import DenseRetriever
from vera.judges import OfflineJudge
from vera.providers._base import MissingExtraError

WHITEBOX = "the baselines' own parts"

VOCABULARY = ["refund", "days", "card", "paris", "france", "fee", "invoice"]


def fake_embed(texts: list[str]) -> list[list[float]]:
    return [[float(word in text.lower()) for word in VOCABULARY] for text in texts]


DOCS = [
    Context(text="Refunds are paid to the original card within 30 days.", id="refunds"),
    Context(text="Paris is the capital of France.", id="geo"),
    Context(text="Each invoice carries a fee of $5.", id="billing"),
]


def test_ranks_by_cosine_similarity_and_validates() -> None:
    retriever = DenseRetriever.from_documents(DOCS, fake_embed)
    hits = retriever.search("How many days for a refund to my card?", top_k=2)
    assert [h.chunk.document_id for h in hits] == ["refunds", "geo"]
    assert hits[0].score == pytest.approx(1.0) and hits[1].score == 0.0
    assert retriever.search("   ") == []
    with pytest.raises(ValueError, match="top_k"):
        retriever.search("refund", top_k=0)
    with pytest.raises(ValueError, match="one vector per text"):
        DenseRetriever.from_documents(DOCS, lambda texts: [[1.0]])


def test_a_baseline_can_retrieve_densely() -> None:
    retriever = DenseRetriever.from_documents(DOCS, fake_embed)
    pipeline = build_baseline("naive-rag", DOCS, OfflineJudge(), retriever=retriever)
    report = vera.evaluate([vera.Sample(id="q", query="Capital of France?")], pipeline=pipeline)
    assert report.samples[0].steps[0].name == "retrieve:DenseRetriever@3"
    # The dense retriever ranks the passage about Paris first; the judge finds every claim of
    # the answer in the retrieved passages, and faithfulness passes well clear of 0.5.
    result = report.samples[0]
    assert result.contexts[0].text == DOCS[1].text
    assert result.claims and all(c.verdict is Verdict.FULLY_SUPPORTED for c in result.claims)
    faithfulness = result.results["faithfulness"]
    assert faithfulness.passed is True
    assert faithfulness.score is not None and faithfulness.score >= 0.9


def test_sentence_transformers_is_an_optional_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'vera-eval\[dense\]'"):
        DenseRetriever.from_sentence_transformers(DOCS)
