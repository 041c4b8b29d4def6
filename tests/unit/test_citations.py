"""Citation markers: parsing, resolution to contexts, attachment to claims, stripping."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vera import Claim, Context
from vera._text._citations import (
    CitationMark,
    attach_citations,
    parse_citations,
    resolve_citation,
    strip_citations,
)

WHITEBOX = "the citation markers' parsing"


def found(response: str) -> list[tuple[str, str, str]]:
    """(label, style, marker text) for each mark, checking the spans on the way."""
    marks = parse_citations(response)
    assert [m.start for m in marks] == sorted(m.start for m in marks)
    return [(m.label, m.style, response[m.start : m.end]) for m in marks]


def labels(attached: dict[str, tuple[CitationMark, ...]]) -> dict[str, list[str]]:
    return {claim_id: [m.label for m in marks] for claim_id, marks in attached.items()}


def attach(response: str, claims: list[Claim]) -> dict[str, list[str]]:
    return labels(attach_citations(response, claims, parse_citations(response)))


def span_of(response: str, text: str) -> tuple[int, int]:
    start = response.index(text)
    return start, start + len(text)


# --- parse_citations: formats ---------------------------------------------------------------


def test_single_numeric() -> None:
    response = "Refunds take 30 days [1]."
    assert found(response) == [("1", "numeric", "[1]")]
    mark = parse_citations(response)[0]
    assert (mark.start, mark.end) == (21, 24)


def test_adjacent_brackets_get_their_own_spans() -> None:
    response = "Paris is the capital[2][3]."
    marks = parse_citations(response)
    assert [(m.label, response[m.start : m.end]) for m in marks] == [("2", "[2]"), ("3", "[3]")]
    assert marks[0].end == marks[1].start


@pytest.mark.parametrize("marker", ["[1, 2]", "[1,2]", "[ 1 ,2 ]", "[1; 2]"])
def test_numeric_lists(marker: str) -> None:
    assert found(f"Both hold {marker}.") == [("1", "numeric", marker), ("2", "numeric", marker)]


@pytest.mark.parametrize("marker", ["[1-3]", "[1 - 3]", "[1\u20133]"])
def test_numeric_ranges_expand(marker: str) -> None:
    assert [label for label, _, _ in found(f"All agree {marker}.")] == ["1", "2", "3"]


def test_mixed_list_and_range_and_leading_zero() -> None:
    assert [label for label, _, _ in found("See [01, 4-5].")] == ["1", "4", "5"]


@pytest.mark.parametrize(
    ("marker", "label"),
    [
        ("[doc-3]", "doc-3"),
        ("[doc3]", "doc3"),
        ("[DOC-3]", "DOC-3"),
        ("[kb_12]", "kb_12"),
        ("[handbook.pdf]", "handbook.pdf"),
        ("[Source 2]", "Source 2"),
        ("[passage 3]", "passage 3"),
    ],
)
def test_id_style(marker: str, label: str) -> None:
    assert found(f"It is so {marker}.") == [(label, "id", marker)]


def test_footnotes() -> None:
    assert found("It is so[^2] and so[^note].") == [
        ("2", "footnote", "[^2]"),
        ("note", "footnote", "[^note]"),
    ]


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("(Source: handbook.pdf)", ["handbook.pdf"]),
        ("(Sources: a.pdf; b.pdf)", ["a.pdf", "b.pdf"]),
        ("(source: a, b)", ["a", "b"]),
        ("(Sources: Smith, 2019; Jones, 2020)", ["Smith, 2019", "Jones, 2020"]),
        ('(Source: "policy.md")', ["policy.md"]),
        ("(Source: 2)", ["2"]),
        ("[Source: faq.html]", ["faq.html"]),
        ("(References: doc-1)", ["doc-1"]),
    ],
)
def test_source_parentheticals(marker: str, expected: list[str]) -> None:
    marks = found(f"Refunds take 30 days {marker}.")
    assert [label for label, _, _ in marks] == expected
    assert {style for _, style, _ in marks} == {"source"}
    assert {text for _, _, text in marks} == {marker}


# --- parse_citations: what is not a citation ------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        "Read [the docs](https://example.com/1) first.",
        "An image ![figure 1](fig1.png) here.",
        "- [x] done\n- [ ] todo\n- [X] also done",
        "It was founded (2019) and grew (1, 2).",
        "He wrote [sic] and it needs [citation needed].",
        "Edited [Ed.] and [NOTE] and [e.g.] here.",
        "A bad range [3-1] and a year span [1900-2000].",
        "Version [1.5] and [v] and [] and [ ].",
        "Use `arr[1]` in code.",
        "Code:\n\n```python\nx = arr[2]\ny = d[doc-3]\n```\n",
        "[^1]: the footnote definition\n[2]: https://example.com",
        "Nested [[x] y] words.",
    ],
)
def test_not_citations(response: str) -> None:
    assert found(response) == []


def test_citations_around_non_citations_still_found() -> None:
    response = "See [docs](http://x.y) and `a[1]` (2019) [sic] but [2]."
    assert found(response) == [("2", "numeric", "[2]")]


def test_bracket_before_source_parenthetical_is_not_a_link() -> None:
    assert found("Free[1](Source: faq.html).") == [
        ("1", "numeric", "[1]"),
        ("faq.html", "source", "(Source: faq.html)"),
    ]


def test_footnote_reference_inside_line_is_not_a_definition() -> None:
    assert found("Refunds take 30 days[^1]: always.") == [("1", "footnote", "[^1]")]


# --- resolve_citation -------------------------------------------------------------------------

PLAIN = [Context(text="a"), Context(text="b"), Context(text="c")]
WITH_IDS = [
    Context(text="a", id="doc-1", source="docs/handbook.pdf"),
    Context(text="b", id="doc-2", source="https://example.com/faq.html"),
    Context(text="c", id="KB_7", source="C:\\files\\Policy.MD"),
]


@pytest.mark.parametrize(
    ("label", "index"),
    [("1", 0), ("3", 2), ("03", 2), ("^2", 1), (" 2 ", 1), ("0", None), ("4", None)],
)
def test_resolve_numbers_are_one_based_positions(label: str, index: int | None) -> None:
    assert resolve_citation(label, PLAIN) == index


def test_resolve_numbers_ignore_ids() -> None:
    assert resolve_citation("2", WITH_IDS) == 1
    assert resolve_citation("7", WITH_IDS) is None


@pytest.mark.parametrize(
    ("label", "index"),
    [
        ("doc-2", 1),
        ("DOC-1", 0),
        ("kb_7", 2),
        ("docs/handbook.pdf", 0),
        ("handbook.pdf", 0),
        ("handbook", 0),
        ("faq.html", 1),
        ("FAQ", 1),
        ("policy.md", 2),
        ("doc2", 1),
        ("doc 1", 0),
        ("doc-3", None),
        ("passage 3", None),
        ("nothing.pdf", None),
    ],
)
def test_resolve_ids_and_sources(label: str, index: int | None) -> None:
    assert resolve_citation(label, WITH_IDS) == index


def test_resolve_exact_id_wins_over_source_and_position() -> None:
    contexts = [Context(text="a", source="doc-2"), Context(text="b", id="doc-2")]
    assert resolve_citation("doc-2", contexts) == 1


@pytest.mark.parametrize(
    ("label", "index"),
    [("doc-3", 2), ("doc3", 2), ("DOC-1", 0), ("passage 2", 1), ("Source 3", 2), ("doc-4", None)],
)
def test_resolve_trailing_number_falls_back_without_ids(label: str, index: int | None) -> None:
    assert resolve_citation(label, PLAIN) == index


def test_resolve_trailing_number_no_fallback_when_any_context_has_an_id() -> None:
    contexts = [Context(text="a"), Context(text="b", id="x"), Context(text="c")]
    assert resolve_citation("doc-3", contexts) is None
    assert resolve_citation("3", contexts) == 2


def test_resolve_loose_id_match_must_be_unique() -> None:
    contexts = [Context(text="a", id="doc-13"), Context(text="b", id="doc1-3")]
    assert resolve_citation("doc13", contexts) is None
    assert resolve_citation("doc1-3", contexts) == 1


def test_resolve_sources_without_ids() -> None:
    contexts = [Context(text="a", source="a/b/guide.txt"), Context(text="b")]
    assert resolve_citation("guide", contexts) == 0
    assert resolve_citation("Guide.TXT", contexts) == 0
    assert resolve_citation("doc-2", contexts) == 1
    assert resolve_citation("manual", contexts) is None


def test_resolve_with_no_contexts() -> None:
    assert resolve_citation("1", []) is None
    assert resolve_citation("doc-1", []) is None


# --- attach_citations ------------------------------------------------------------------------


def test_attach_by_span_one_mark_per_sentence() -> None:
    response = "Refunds take 30 days [1]. Shipping is free [2]."
    claims = [
        Claim("c1", "Refunds take 30 days", span_of(response, "Refunds take 30 days")),
        Claim("c2", "Shipping is free", span_of(response, "Shipping is free")),
    ]
    assert attach(response, claims) == {"c1": ["1"], "c2": ["2"]}


def test_attach_marker_after_full_stop_belongs_to_previous_sentence() -> None:
    response = "Refunds take 30 days. [1] Refunds need a receipt. [2]"
    claims = [
        Claim("c1", "Refunds take 30 days.", span_of(response, "Refunds take 30 days.")),
        Claim("c2", "Refunds need a receipt.", span_of(response, "Refunds need a receipt.")),
    ]
    assert attach(response, claims) == {"c1": ["1"], "c2": ["2"]}


def test_attach_marker_glued_after_full_stop() -> None:
    response = "Refunds take 30 days.[1][2] Refunds need a receipt.[3]"
    claims = [Claim("c1", "Refunds take 30 days"), Claim("c2", "Refunds need a receipt")]
    assert attach(response, claims) == {"c1": ["1", "2"], "c2": ["3"]}


def test_attach_marker_after_paragraph_goes_to_paragraph_end() -> None:
    response = "Refunds take 30 days.\n\n[1]\n\nShipping is free."
    claims = [Claim("c1", "Refunds take 30 days"), Claim("c2", "Shipping is free")]
    assert attach(response, claims) == {"c1": ["1"], "c2": []}


def test_attach_two_clauses_with_separate_markers() -> None:
    response = "A is 3 [1], and B is 4 [2]."
    claims = [
        Claim("a", "A is 3", span_of(response, "A is 3")),
        Claim("b", "B is 4", span_of(response, "B is 4")),
    ]
    assert attach(response, claims) == {"a": ["1"], "b": ["2"]}


def test_attach_two_clauses_without_spans_are_located() -> None:
    response = "A is 3 [1], and b is 4 [2]."
    claims = [Claim("a", "a is 3."), Claim("b", "B  is 4")]
    assert attach(response, claims) == {"a": ["1"], "b": ["2"]}


def test_attach_sentence_final_marker_covers_all_clauses() -> None:
    response = "A is 3, and B is 4 [1][2]."
    claims = [
        Claim("a", "A is 3", span_of(response, "A is 3")),
        Claim("b", "B is 4", span_of(response, "B is 4")),
    ]
    assert attach(response, claims) == {"a": ["1", "2"], "b": ["1", "2"]}


def test_attach_marker_opening_a_sentence_goes_to_its_first_claim() -> None:
    response = "[1] A is 3, and B is 4 [2]."
    claims = [
        Claim("a", "A is 3", span_of(response, "A is 3")),
        Claim("b", "B is 4", span_of(response, "B is 4")),
    ]
    assert attach(response, claims) == {"a": ["1"], "b": ["2"]}


def test_attach_claim_without_citation_gets_empty_tuple() -> None:
    response = "Refunds take 30 days [1]. Shipping is free."
    claims = [Claim("c1", "Refunds take 30 days"), Claim("c2", "Shipping is free")]
    attached = attach_citations(response, claims, parse_citations(response))
    assert attached["c2"] == ()
    assert [m.label for m in attached["c1"]] == ["1"]


def test_attach_without_span_matches_stripped_sentence_text() -> None:
    response = "Paris [1] is the capital of France. Berlin is in Germany [2]."
    claims = [Claim("c1", "paris is the capital of france"), Claim("c2", "Berlin is in Germany")]
    assert attach(response, claims) == {"c1": ["1"], "c2": ["2"]}


def test_attach_without_span_falls_back_to_word_overlap() -> None:
    response = "The refund window is 30 days [1]. Delivery is free in Europe [2]."
    claims = [
        Claim("c1", "Europe gets free delivery"),
        Claim("c2", "You have a 30 day window for refunds"),
        Claim("c3", "Unrelated zebra facts"),
    ]
    assert attach(response, claims) == {"c1": ["2"], "c2": ["1"], "c3": []}


def test_attach_span_overlapping_two_sentences_picks_the_larger_overlap() -> None:
    response = "Short one [1]. A much longer second sentence here [2]."
    start = response.index("one")
    claims = [Claim("c1", "x", (start, len(response) - 6))]
    assert attach(response, claims) == {"c1": ["2"]}


def test_attach_every_claim_present_even_without_marks() -> None:
    claims = [Claim("c1", "Refunds take 30 days"), Claim("c2", "Shipping is free")]
    assert attach_citations("Refunds take 30 days.", claims, []) == {"c1": (), "c2": ()}
    assert attach_citations("", claims, []) == {"c1": (), "c2": ()}


def test_attach_footnotes_and_sources() -> None:
    response = "Refunds take 30 days[^1]. Shipping is free (Source: faq.html)."
    claims = [Claim("c1", "Refunds take 30 days"), Claim("c2", "Shipping is free")]
    assert attach(response, claims) == {"c1": ["1"], "c2": ["faq.html"]}


# --- strip_citations -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Refunds take 30 days [1].", "Refunds take 30 days."),
        ("Paris[1][2] is big [1, 2-3], really [doc-3].", "Paris is big, really."),
        ("Done. [1] Next.", "Done. Next."),
        ("Free (Sources: a; b) [^2].", "Free."),
        ("Keep [sic] and [link](u) and `a[1]`.", "Keep [sic] and [link](u) and `a[1]`."),
        ("Nested [[1]2] gone.", "Nested gone."),
        ("  - item [1]\n  - next [2]  ", "- item\n  - next"),
    ],
)
def test_strip_citations(text: str, expected: str) -> None:
    assert strip_citations(text) == expected


# --- properties ------------------------------------------------------------------------------

WORDS = st.sampled_from(["refunds", "take", "thirty", "days", "Paris", "is", "big", "free"])
NUMBER = st.integers(min_value=0, max_value=120)


@st.composite
def marker(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A citation marker and the labels it must yield."""
    kind = draw(st.sampled_from(["one", "list", "range", "id", "foot", "source"]))
    a, b = draw(NUMBER), draw(NUMBER)
    if kind == "one":
        return f"[{a}]", [str(a)]
    if kind == "list":
        return f"[{a}, {b}]", [str(a), str(b)]
    if kind == "range":
        low, high = min(a, b), min(a, b) + draw(st.integers(0, 5))
        return f"[{low}-{high}]", [str(n) for n in range(low, high + 1)]
    if kind == "id":
        name = draw(st.sampled_from(["doc", "kb", "DOC"])) + draw(st.sampled_from(["-", "_", ""]))
        return f"[{name}{a}]", [f"{name}{a}"]
    if kind == "foot":
        return f"[^{a}]", [str(a)]
    return f"(Sources: s{a}.pdf; s{b}.pdf)", [f"s{a}.pdf", f"s{b}.pdf"]


NOISE = st.sampled_from(["", " [sic]", " [x]", " (2019)", " [link](http://e.com/1)", " `a[3]`"])


@st.composite
def cited_response(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A response of sentences with markers and noise, and the labels it cites, in order."""
    parts: list[str] = []
    expected: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        parts.append(" ".join(draw(st.lists(WORDS, min_size=1, max_size=6))))
        parts.append(draw(NOISE))
        for text, cited in draw(st.lists(marker(), max_size=3)):
            parts.append(draw(st.sampled_from(["", " "])) + text)
            expected.extend(cited)
        parts.append(draw(st.sampled_from([". ", "! ", ".\n\n", " and "])))
    return "".join(parts), expected


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(cited_response())
def test_property_parse_finds_exactly_the_markers(case: tuple[str, list[str]]) -> None:
    response, expected = case
    marks = parse_citations(response)
    assert [m.label for m in marks] == expected
    assert [m.start for m in marks] == sorted(m.start for m in marks)
    for mark in marks:
        text = response[mark.start : mark.end]
        assert 0 <= mark.start < mark.end <= len(response)
        if mark.style == "numeric" and mark.label not in text:
            assert re.fullmatch(r"\[\d+-\d+\]", text)
            low, high = map(int, text[1:-1].split("-"))
            assert low < int(mark.label) < high
        else:
            assert mark.label in text
    stripped = strip_citations(response)
    outside_code = re.sub(r"`[^`]*`", "", stripped)
    assert not re.search(r"\[\^?\s*\d[\d\s,;-]*\]", outside_code)
    assert "Sources:" not in stripped
    assert parse_citations(stripped) == []


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(cited_response())
def test_property_attach_hands_out_only_given_marks(case: tuple[str, list[str]]) -> None:
    response, _ = case
    marks = parse_citations(response)
    claims = [Claim(f"c{i}", text) for i, text in enumerate(re.split(r"[.!]\s+", response))]
    attached = attach_citations(response, claims, marks)
    assert set(attached) == {c.id for c in claims}
    for given_marks in attached.values():
        assert all(m in marks for m in given_marks)
        assert list(given_marks) == sorted(given_marks, key=lambda m: m.start)
