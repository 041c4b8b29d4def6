"""The bundled domain datasets (legal, research, technical): composition and ground truth.

Each file is checked as raw JSON (counts, ids, verbatim citations, answer shape, document
lengths) and through VERA's loader, and every grounded answer must be supported by its own
citations according to the offline judge.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from vera import Verdict, load_dataset
from vera.datasets import BUNDLED, bundled_path
from vera.judges import OfflineJudge
from vera.judges._offline import split_units

WHITEBOX = "the offline judge's own parts"


@dataclass(frozen=True)
class Spec:
    title: str
    domain: str
    documents: int
    categories: dict[str, int]
    words: tuple[int, int]


SPECS: dict[str, Spec] = {
    "legal": Spec(
        "legal-contracts",
        "legal",
        5,
        {"fact_single": 20, "fact_multiple": 15, "reasoning": 10, "unanswerable": 5},
        (400, 700),
    ),
    "research": Spec(
        "research-summaries",
        "research",
        10,
        {"summary": 15, "contradiction": 10, "cross_document": 5},
        (250, 400),
    ),
    "technical": Spec(
        "technical-docs",
        "technical",
        8,
        {"fact_single": 15, "reasoning": 5},
        (300, 500),
    ),
}
NAMES = list(SPECS)

# Each unanswerable question, the documents that must stay silent on it (None: all of them)
# and words whose presence there would mean the dataset does answer it after all.
ABSENT_TOPICS: dict[str, tuple[tuple[str, ...] | None, tuple[str, ...]]] = {
    "legal-q46": (("contract-saas",), ("liab",)),
    "legal-q47": (None, ("majeure",)),
    "legal-q48": (None, ("solicit", "hire")),
    "legal-q49": (None, ("insur",)),
    "legal-q50": (None, ("arbitra",)),
}

SUPPORTED = {Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED}
MIN_SUPPORT_RATE = 0.9
MIN_CHECKED_SHARE = 0.8


@cache
def raw_text(name: str) -> str:
    path = bundled_path(name)
    assert path is not None, f"{name!r} is not a bundled dataset"
    return path.read_text(encoding="utf-8")


def raw(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(raw_text(name))
    return data


def answerable(name: str) -> list[dict[str, Any]]:
    return [q for q in raw(name)["queries"] if q["category"] != "unanswerable"]


@pytest.mark.parametrize("name", NAMES)
def test_registered_by_name(name: str) -> None:
    assert BUNDLED[name] == f"{name}.json"
    path = bundled_path(name)
    assert path is not None and path.is_file()


@pytest.mark.parametrize("name", NAMES)
def test_file_is_pretty_printed_utf8_json(name: str) -> None:
    data = raw(name)
    assert raw_text(name) == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    assert set(data) == {"name", "domain", "documents", "queries"}


@pytest.mark.parametrize("name", NAMES)
def test_composition(name: str) -> None:
    spec, data = SPECS[name], raw(name)
    assert (data["name"], data["domain"]) == (spec.title, spec.domain)
    assert len(data["documents"]) == spec.documents
    assert Counter(q["category"] for q in data["queries"]) == spec.categories
    assert len(data["queries"]) == sum(spec.categories.values())


@pytest.mark.parametrize("name", NAMES)
def test_ids_are_unique(name: str) -> None:
    data = raw(name)
    doc_ids = [d["id"] for d in data["documents"]]
    query_ids = [q["id"] for q in data["queries"]]
    assert len(set(doc_ids)) == len(doc_ids)
    assert len(set(query_ids)) == len(query_ids)
    assert all(re.fullmatch(rf"{name}-q\d\d", qid) for qid in query_ids)


@pytest.mark.parametrize("name", NAMES)
def test_every_quote_is_verbatim_in_its_document(name: str) -> None:
    data = raw(name)
    texts = {d["id"]: d["text"] for d in data["documents"]}
    cited = 0
    for query in data["queries"]:
        for citation in query["citations"]:
            assert set(citation) == {"document_id", "quote"}, query["id"]
            assert citation["document_id"] in texts, (query["id"], citation["document_id"])
            quote = citation["quote"]
            assert len(quote.split()) >= 4, (query["id"], quote)
            assert quote in texts[citation["document_id"]], (query["id"], quote)
            cited += 1
    assert cited >= len(answerable(name))


@pytest.mark.parametrize("name", NAMES)
def test_answer_shape(name: str) -> None:
    for query in raw(name)["queries"]:
        qid = query["id"]
        assert query["query"].strip(), qid
        if query["category"] == "unanswerable":
            assert query["grounded_answer"] is None, qid
            assert query["citations"] == [], qid
            # The score a correct response (an abstention) gets, as in legal_mini.json.
            assert query["expected_score"] == 1.0, qid
        else:
            answer = query["grounded_answer"]
            assert isinstance(answer, str) and answer.strip(), qid
            assert 1 <= len(split_units(answer)) <= 4, qid
            assert len(query["citations"]) >= 1, qid
            assert query["expected_score"] == 1.0, qid


@pytest.mark.parametrize("name", NAMES)
def test_multi_fact_and_multi_document_questions_cite_enough(name: str) -> None:
    for query in raw(name)["queries"]:
        docs = {c["document_id"] for c in query["citations"]}
        if query["category"] == "fact_multiple":
            assert len(query["citations"]) >= 2, query["id"]
        if query["category"] == "contradiction":
            assert len(docs) == 2, query["id"]
        if query["category"] == "cross_document":
            assert len(docs) >= 2, query["id"]


def test_research_contradictions_form_five_disjoint_pairs() -> None:
    data = raw("research")
    pairs = Counter(
        frozenset(c["document_id"] for c in q["citations"])
        for q in data["queries"]
        if q["category"] == "contradiction"
    )
    assert len(pairs) == 5
    assert set(pairs.values()) == {2}
    paired = [doc for pair in pairs for doc in pair]
    assert sorted(paired) == sorted(d["id"] for d in data["documents"])


def test_unanswerable_legal_questions_are_absent_from_the_contracts() -> None:
    data = raw("legal")
    unanswerable = {q["id"] for q in data["queries"] if q["category"] == "unanswerable"}
    assert unanswerable == set(ABSENT_TOPICS)
    texts = {d["id"]: d["text"].lower() for d in data["documents"]}
    for qid, (doc_ids, words) in ABSENT_TOPICS.items():
        for doc_id in doc_ids or tuple(texts):
            for word in words:
                assert word not in texts[doc_id], (qid, doc_id, word)
    # The contract-specific absence is real: other contracts do have the clause.
    assert sum("liab" in text for text in texts.values()) >= 2


@pytest.mark.parametrize("name", NAMES)
def test_document_lengths(name: str) -> None:
    low, high = SPECS[name].words
    for document in raw(name)["documents"]:
        assert document["title"].strip(), document["id"]
        words = len(document["text"].split())
        assert low <= words <= high, (document["id"], words)


def test_contracts_have_numbered_clauses() -> None:
    for document in raw("legal")["documents"]:
        numbers = [int(n) for n in re.findall(r"(?m)^(\d+)\. [A-Z]", document["text"])]
        assert len(numbers) >= 10, document["id"]
        assert numbers == list(range(1, len(numbers) + 1)), document["id"]


def test_research_summaries_report_concrete_numbers() -> None:
    for document in raw("research")["documents"]:
        text = document["text"]
        assert re.search(r"\(\d{4}\)", text), document["id"]  # the paper's year
        assert len(re.findall(r"\d+(?:\.\d+)?%", text)) >= 2, document["id"]


def test_technical_docs_are_markdown() -> None:
    for document in raw("technical")["documents"]:
        text = document["text"]
        assert text.startswith("# "), document["id"]
        assert len(re.findall(r"(?m)^## ", text)) >= 2, document["id"]
        assert re.search(r"(?m)^(?:- |\d+\. )", text), document["id"]
        assert re.search(r"`[^`\n]+`", text), document["id"]


@pytest.mark.parametrize("name", NAMES)
def test_loads_through_vera(name: str) -> None:
    spec, data = SPECS[name], raw(name)
    dataset = load_dataset(name)
    assert dataset.name == spec.title
    assert [d.id for d in dataset.documents] == [d["id"] for d in data["documents"]]
    assert dataset.size_hint() == len(data["queries"])
    samples = list(dataset)
    assert len(samples) == len(data["queries"])
    for sample, query in zip(samples, data["queries"], strict=True):
        assert sample.id == query["id"]
        assert sample.query == query["query"]
        assert sample.response is None  # a pipeline has yet to answer
        assert sample.reference == query["grounded_answer"]
        assert sample.category == query["category"]
        assert sample.unanswerable == (query["category"] == "unanswerable")
        assert [c.document_id for c in sample.citations] == [
            c["document_id"] for c in query["citations"]
        ]
        assert sample.metadata == {"expected_score": query["expected_score"]}


@pytest.mark.parametrize("name", NAMES)
async def test_offline_judge_supports_grounded_answers(name: str) -> None:
    judge = OfflineJudge()
    total = supported = 0
    unsupported: list[str] = []
    for query in answerable(name):
        answer = query["grounded_answer"]
        claims = await judge.extract_claims(answer)
        # Nearly all of the answer must be checked: a sentence the judge reads as a remark
        # about the sources ("X does not include Y") would otherwise escape verification.
        checked = sum(claim.span[1] - claim.span[0] for claim in claims if claim.span)
        assert checked >= MIN_CHECKED_SHARE * len(answer), query["id"]
        verdicts = await judge.verify_claims(
            claims, [" ".join(c["quote"] for c in query["citations"])]
        )
        assert len(verdicts) == len(claims)
        for claim, verdict in zip(claims, verdicts, strict=True):
            total += 1
            if verdict.verdict in SUPPORTED:
                supported += 1
            else:
                unsupported.append(f"{query['id']}: {verdict.verdict.value}: {claim.text}")
    rate = supported / total
    assert rate >= MIN_SUPPORT_RATE, f"{rate:.1%} supported; unsupported:\n" + "\n".join(
        unsupported
    )
