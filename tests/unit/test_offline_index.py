"""The offline judge's context index: a long context is searched through counts per word
(numpy) and keeps only its sentences' words, a short one is scanned window by window. Both
must give exactly the window the scan gives, ties included, so verdicts never depend on a
context's length."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vera.judges.offline import Postings, analyse, analyse_text
from vera.judges.offline import _index as index

WORDS = [f"w{i}" for i in range(12)]
sentences = st.lists(st.frozensets(st.sampled_from(WORDS), max_size=5), max_size=30)
claims = st.frozensets(st.sampled_from([*WORDS, "absent"]), max_size=8)


def counted(contents: list[frozenset[str]], monkeypatch: pytest.MonkeyPatch) -> Postings:
    with monkeypatch.context() as patch:
        patch.setattr(index, "_SCAN_SENTENCES", -1)
        postings = Postings(contents)
    assert postings.arrays is not None
    return postings


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(sentences, claims, st.integers(min_value=1, max_value=4))
def test_counting_finds_the_window_the_scan_finds(
    contents: list[frozenset[str]], claim: frozenset[str], width: int
) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast = counted(contents, monkeypatch)
    scan = Postings(contents)
    assert scan.arrays is None
    assert fast.best(claim, width) == scan.best(claim, width)


def test_ties_go_to_the_fewest_sentences_then_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    contents = [frozenset({"a"}), frozenset({"b"}), frozenset({"a", "b"}), frozenset({"a", "b"})]
    for postings in (Postings(contents), counted(contents, monkeypatch)):
        assert postings.best(frozenset({"a", "b"}), 2) == (2, -1, -2)
        assert postings.best(frozenset({"a"}), 2) == (1, -1, 0)
        assert postings.best(frozenset({"c"}), 2)[0] == 0


def test_a_long_context_re_reads_the_facts_it_does_not_keep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = " ".join(f"Gallery {i} holds {i % 7 + 2} paintings by Anna Berg." for i in range(40))
    kept = index._build(text)
    monkeypatch.setattr(index, "LONG_TEXT", 100)
    lean = index._build(text)
    assert kept.kept is not None and lean.kept is None
    assert (lean.spans, lean.words, lean.number_keys) == (kept.spans, kept.words, kept.number_keys)
    assert [lean.facts(i) for i in range(len(lean.spans))] == list(kept.kept)


def test_a_long_text_is_analysed_in_pieces_with_the_same_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "\n\n".join(f"Clause {i} allows {i + 3} days of notice, not less." for i in range(50))
    whole = analyse(text)
    monkeypatch.setattr("vera.judges.offline._tokens._PIECE", 200)
    pieces = analyse_text(text)
    assert pieces.content == whole.content
    assert pieces.numbers == whole.numbers
    assert pieces.surfaces == whole.surfaces
