"""The offline judge's context index: a long context is searched through counts per word
(numpy) and keeps only its sentences' words, a short one is scanned window by window. Both
must give exactly the window the scan gives, ties included, so verdicts never depend on a
context's length."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vera
from vera.judges._offline import Postings, analyse, analyse_text, split_units
from vera.judges._offline import _index as index
from vera.judges._offline import _tokens as tokens
from vera.judges._offline._languages import lexicon_for, reading
from vera.judges._offline._tokens import read_facts, read_light

WHITEBOX = "the context index's piece size and scan limits"

WORDS = [f"w{i}" for i in range(12)]
TRICKY = [
    "One refund takes five days, and one costs $5 or 5k, in one day.",
    "ONE Refund TAKES Five days; one DON\u2019T don't one, not only Not Only.",
    "No, the 16th order of one, twenty five users, five, and Five is not just one.",
    "Kein Vertrag, nicht nur l'article d'Acme, 只 包含 电子邮件 支持 5 天.",
]
"""Words that read differently by where they stand: number words, negations, "only"."""
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
    assert (lean.spans, lean.words, lean.number_keys) == (kept.spans, kept.words, kept.number_keys)
    whole = [kept.facts(i) for i in range(len(kept.spans))]
    assert [lean.facts(i) for i in range(len(lean.spans))] == whole
    assert whole == [analyse(text[start:end]) for start, end in kept.spans]
    assert len(kept.full) == len(kept.spans) and not lean.full
    assert all(facts.names for facts in whole)  # the full reading, names included


def test_an_index_reads_a_sentence_whole_only_when_a_claim_is_matched_with_it() -> None:
    text = "Refunds take 30 days. Anna Berg is not the owner. Shipping is free in Norway."
    built = index._build(text)
    assert not built.full
    assert built.facts(1).negations and built.facts(1).names
    assert set(built.full) == {1}


def test_a_light_reading_gives_the_words_a_full_one_gives() -> None:
    """Every context sentence of the bundled datasets, in each of their languages: the index
    reads sentences lightly, so its words must be a full reading's, not an approximation."""
    compared = 0
    for name in ("example", "multilingual"):
        for sample in vera.load_dataset(name):
            lexicon = lexicon_for(str(sample.metadata.get("language", "en")))
            assert lexicon is not None
            with reading(lexicon):
                for context in (c.text for c in sample.contexts):
                    for unit in split_units(context):
                        piece = context[unit.start : unit.end]
                        light, full = read_light(piece), read_facts(piece)
                        assert (light.content, light.numbers, light.words) == (
                            full.content,
                            full.numbers,
                            full.words,
                        ), piece
                        compared += 1
    assert compared > 100


@pytest.mark.parametrize("language", ["en", "de", "fr", "zh"])
def test_a_light_reading_read_again_still_gives_a_full_readings_words(language: str) -> None:
    """A light reading keeps each plain word it has read by its spelling: a word read a
    second time, in another case or where it is a number word, reads as a full reading does."""
    pieces = TRICKY
    lexicon = lexicon_for(language)
    assert lexicon is not None
    with reading(lexicon):
        for _ in range(2):
            for piece in pieces:
                light, full = read_light(piece), read_facts(piece)
                assert (light.content, light.numbers, light.words) == (
                    full.content,
                    full.numbers,
                    full.words,
                ), piece


def test_a_full_reading_of_words_read_before_is_a_first_readings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every context sentence and response of the bundled datasets: a full reading that finds
    its plain words by their spelling (read before) gives every fact a reading word by word
    gives, names, negations, word order and surfaces included."""
    pieces: list[tuple[str, str]] = [
        (language, text) for language in ("en", "de", "fr") for text in TRICKY
    ]
    for name in ("example", "multilingual"):
        for sample in vera.load_dataset(name):
            language = str(sample.metadata.get("language", "en"))
            texts = [sample.response or "", *(c.text for c in sample.contexts)]
            pieces += [(language, t[u.start : u.end]) for t in texts for u in split_units(t)]

    def read_all() -> list[tuple[object, ...]]:
        found = []
        for language, piece in pieces:
            lexicon = lexicon_for(language)
            assert lexicon is not None
            with reading(lexicon):
                for facts in (read_facts(piece), read_facts(piece)):
                    found.append((facts, facts.surfaces, facts.order))
        return found

    remembered = read_all()
    monkeypatch.setattr(tokens, "_PLAIN_WORDS", {})
    monkeypatch.setattr(tokens, "_remember", lambda *_: None)
    assert read_all() == remembered
    assert len(remembered) > 400


def test_tokens_kept_for_recent_texts_are_the_tokens_read_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sentence read lightly and then whole is tokenised once: the kept tokens are those a
    fresh reading gives, in every language (CJK bigrams, numbers in one form), after older
    texts made way for newer ones, and a long text is never kept."""
    monkeypatch.setattr(tokens, "_RECENT_TOKENS", OrderedDict())
    monkeypatch.setattr(tokens, "_RECENT_LIMIT", 5)
    texts = [*TRICKY, *(f"Plan {i} costs {i},000 dollars [{i}]." for i in range(8))]
    lexicons = [lexicon_for(language) for language in ("en", "de", "zh", "ja")]
    for _ in range(2):
        for text in texts:
            # The same text in each language in turn: its tokens are kept per language.
            for lexicon in lexicons:
                assert lexicon is not None
                with reading(lexicon):
                    kept = tokens._read_tokens(text, lexicon)
                    assert kept == tokens._tokenised(text, lexicon), (lexicon.code, text)
                    assert read_light(text) == read_light(text)
                    assert len(tokens._RECENT_TOKENS) <= 5
    long = "Refunds take 30 days. " * 200
    tokens._read_tokens(long, tokens.ENGLISH)
    assert all(text != long for _, text in tokens._RECENT_TOKENS)


def test_a_long_text_is_analysed_in_pieces_with_the_same_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "\n\n".join(f"Clause {i} allows {i + 3} days of notice, not less." for i in range(50))
    whole = analyse(text)
    monkeypatch.setattr("vera.judges._offline._tokens._PIECE", 200)
    pieces = analyse_text(text)
    assert pieces.content == whole.content
    assert pieces.numbers == whole.numbers
    assert pieces.surfaces == whole.surfaces


def test_the_quick_checks_before_the_slow_patterns_never_skip_a_match() -> None:
    """`is_about_sources` and `prose_days` look for cue words before their regular
    expressions, and `names_days` before a prose context's days are read: on every sentence
    of the bundled datasets and every abstention the claim tests use, a text the expression
    matches holds a cue."""
    from vera._text import _abstention
    from vera.judges._offline import _record

    texts = [
        "The documents do not specify the fee.",
        "I can't determine that from the sources.",
        "We are unable to answer.",
        "The sources disagree on the date.",
        "The reports reach opposite conclusions.",
        "Open daily from 9 to 5; closed Sundays.",
        "Hours: Mon-Fri 8am-6pm, seven days a week in summer.",
        "Support answers on weekdays; the office is closed on weekends.",
    ]
    for name in ("example", "multilingual", "conversations"):
        for sample in vera.load_dataset(name):
            texts.extend([sample.response or "", *(c.text for c in sample.contexts)])
    matched = 0
    for text in texts:
        for sentence in text.split(". "):
            low = sentence.lower()
            if _abstention._ABOUT_SOURCES.search(sentence):
                matched += 1
                assert any(cue in low for cue in _abstention._ABOUT_SOURCES_CUES), sentence
            if _record._DAY_TOKEN.search(sentence) or _record._EVERY_DAY.search(sentence):
                matched += 1
                assert any(hint in low for hint in _record._DAY_HINTS), sentence
            if _record._named_days(sentence)[0]:
                # a claim's prose records are read only where it names a day
                assert _record.names_days(sentence), sentence
    assert matched >= 7
