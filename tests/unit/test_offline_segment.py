"""Claim extraction of the offline judge: segmentation, clause splitting, filtering, spans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vera import Claim
from vera.judges import OfflineJudge
from vera.judges._offline import extract_claims, split_units

WHITEBOX = "the offline judge's own parts"


def texts(response: str) -> list[str]:
    claims = extract_claims(response)
    assert_spans_exact(response, claims)
    return [c.text for c in claims]


def assert_spans_exact(response: str, claims: list[Claim]) -> None:
    previous_end = 0
    for number, claim in enumerate(claims, start=1):
        assert claim.id == f"c{number}"
        assert claim.span is not None
        start, end = claim.span
        assert previous_end <= start < end <= len(response)
        assert response[start:end] == claim.text
        assert claim.text == claim.text.strip()
        previous_end = end


def test_plain_sentences() -> None:
    assert texts("Paris is in France. Berlin is in Germany! Rome is in Italy.") == [
        "Paris is in France.",
        "Berlin is in Germany!",
        "Rome is in Italy.",
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "Dr. Smith and Mrs. Jones met Mr. Brown at St. Mary's hospital.",
        "Fruit, e.g. apples, and vegetables, i.e. greens, are sold by Acme Inc. in Ohio.",
        "The U.S. economy grew faster than the U.K. economy did.",
        "The book was written by J. K. Rowling in Edinburgh.",
        "The meeting runs from 9 a.m. to 5 p.m. on weekdays.",
        "See Fig. 3 and No. 7 for approx. the same results vs. the baseline.",
        "The release on Jan. 5 fixed the bug in the parser.",
        "Python 3.5 and v2.1.0 of the tool cost $1.5 million in total.",
        "Visit https://example.com/docs.html or mail help@example.org for details.",
        "He said it was fine... then the server crashed.",
    ],
)
def test_abbreviations_decimals_urls_stay_in_one_sentence(sentence: str) -> None:
    response = f"{sentence} The next sentence is separate."
    assert texts(response) == [sentence, "The next sentence is separate."]


def test_abbreviation_can_end_a_sentence_before_a_capitalised_function_word() -> None:
    assert texts("The firm is based in the U.S. It was founded in 1990.") == [
        "The firm is based in the U.S.",
        "It was founded in 1990.",
    ]


def test_closing_quotes_and_brackets_stay_with_their_sentence() -> None:
    response = 'He wrote "the limit is ten." Then he left (as planned.) The end came soon.'
    assert texts(response) == [
        'He wrote "the limit is ten."',
        "Then he left (as planned.)",
        "The end came soon.",
    ]


def test_ellipsis_before_a_capital_ends_a_sentence() -> None:
    assert texts("The build failed... The tests never ran.") == [
        "The build failed...",
        "The tests never ran.",
    ]


def test_bullets_and_numbered_items_are_claims_without_their_markers() -> None:
    response = (
        "Here are the steps:\n"
        "- Install the package with pip.\n"
        "* Create a config file in the root.\n"
        "• Set the API key in the environment\n"
        "1. Run the evaluation command.\n"
        "2) Open the generated report."
    )
    assert texts(response) == [
        "Install the package with pip.",
        "Create a config file in the root.",
        "Set the API key in the environment",
        "Run the evaluation command.",
        "Open the generated report.",
    ]


def test_headings_intros_and_tables_are_not_claims() -> None:
    response = (
        "## Setup\n"
        "**Requirements**\n"
        "You need the following:\n"
        "| Plan | Price |\n"
        "|------|-------|\n"
        "Python 3.11 is required for the tool."
    )
    assert texts(response) == ["Python 3.11 is required for the tool."]


def test_questions_and_filler_are_dropped() -> None:
    response = (
        "Sure! Great question. The fee is waived for students. Why does that matter? "
        "I hope this helps. Let me know if you have any other questions."
    )
    assert texts(response) == ["The fee is waived for students."]


def test_newlines_inside_a_paragraph_do_not_split_a_sentence() -> None:
    response = "The contract may be\nterminated with notice.\n\nPayment is due monthly."
    assert texts(response) == [
        "The contract may be\nterminated with notice.",
        "Payment is due monthly.",
    ]


def test_code_fences_are_skipped() -> None:
    response = "Install it first.\n```\npip install vera-eval. It works.\n```\nThen run it."
    assert texts(response) == ["Install it first.", "Then run it."]


def test_semicolon_splits_into_clauses() -> None:
    assert texts("The basic plan costs $10 per month; the premium plan costs $25 per month.") == [
        "The basic plan costs $10 per month",
        "the premium plan costs $25 per month.",
    ]


def test_conjunction_splits_only_independent_clauses() -> None:
    assert texts(
        "The basic plan includes email support, but the premium plan adds phone support."
    ) == [
        "The basic plan includes email support",
        "the premium plan adds phone support.",
    ]
    # Lists and short or subject-less right-hand sides stay whole.
    for sentence in (
        "We support Python, Java, and Go in the current release.",
        "The service is cheap, but slow.",
        "The tool parses the file, and returns a list of claims to the caller.",
    ):
        assert texts(sentence) == [sentence]


def test_units_keep_headings_for_contexts_but_mark_them() -> None:
    text = "# Refund policy\nRefunds take 30 days. Is that long?"
    units = split_units(text)
    assert [(text[u.start : u.end], u.claimable) for u in units] == [
        ("Refund policy", False),
        ("Refunds take 30 days.", True),
        ("Is that long?", False),
    ]


async def test_judge_extract_claims_matches_module_function() -> None:
    response = "Paris is in France. It has 2 million people."
    claims = await OfflineJudge().extract_claims(response, query="Where is Paris?")
    assert claims == extract_claims(response)
    assert [c.id for c in claims] == ["c1", "c2"]


_ALPHABET = st.sampled_from(
    [*"abcXYZ .!?;:,-*#|`\n\t\"')(0123456789$%…", "Dr.", "e.g.", "U.S.", "- ", "1. ", " and "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=80).map("".join))
def test_spans_are_exact_ordered_and_disjoint_for_any_text(response: str) -> None:
    claims = extract_claims(response)
    assert_spans_exact(response, claims)
    assert all(c.text for c in claims)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_spans_hold_for_arbitrary_unicode(response: str) -> None:
    assert_spans_exact(response, extract_claims(response))
