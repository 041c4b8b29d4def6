"""Contexts shown with numbered sentences: every character shown, every id resolves to the
exact text of its context."""

from __future__ import annotations

from vera.judges._sentence_ids import SentenceIds

WHITEBOX = "the sentence numbering the compact prompts cite"

CONTEXTS = [
    "Refunds are issued to the original card. The window is 30 days.",
    "Dr. Smith wrote it.\n\n```\ncode();\n```\nAfter the code.",
    "",
]


def test_each_sentence_is_an_exact_slice_and_nothing_is_left_out() -> None:
    ids = SentenceIds.of(CONTEXTS)
    assert ids.sentences[0] == (
        "Refunds are issued to the original card.",
        "The window is 30 days.",
    )
    for context, sentences in zip(CONTEXTS, ids.sentences, strict=True):
        assert all(s in context for s in sentences)
        # Only whitespace is left between the sentences: a code block goes with the one before.
        assert "".join("".join(s.split()) for s in sentences) == "".join(context.split())


def test_ids_render_per_context_and_resolve_to_the_text() -> None:
    ids = SentenceIds.of(CONTEXTS)
    shown = ids.render()
    assert shown.startswith(
        "[1]\n1.1 Refunds are issued to the original card.\n1.2 The window is 30 days.\n\n[2]\n"
    )
    assert shown.endswith("\n\n[3]")  # an empty context is still shown, as empty
    assert ids.resolve("1.2") == (1, "The window is 30 days.")
    assert ids.resolve(" [2.1] ") == (2, "Dr. Smith wrote it.\n\n```\ncode();\n```")
    assert ids.resolve("1.3") is None and ids.resolve("3.1") is None
    assert ids.resolve("two") is None
    assert ids.describe_ids() == "1.1 to 1.2, 2.1 to 2.2"


def test_ids_cost_more_than_quotes_only_for_long_contexts_and_few_claims() -> None:
    short = SentenceIds.of(["Refunds are issued to the original card. The window is 30 days."])
    assert not short.cost_more_than_quotes(1)
    long = SentenceIds.of([" ".join(f"Fact {i} holds." for i in range(200))])
    assert long.cost_more_than_quotes(3)
    # Enough claims, each quote a whole sentence: the ids pay again.
    assert not long.cost_more_than_quotes(400)


def test_a_sentence_cited_by_its_text_resolves_to_that_sentence() -> None:
    # Small models write the sentence where its number is asked, with or without the shown id.
    ids = SentenceIds.of(CONTEXTS, flat=True)
    assert ids.resolve("The window is 30 days.") == (1, "The window is 30 days.")
    assert ids.resolve('2 "the window is 30 days"') == (1, "The window is 30 days.")
    assert ids.resolve("Refunds are issued to the original card") == (
        1,
        "Refunds are issued to the original card.",
    )
    assert ids.resolve("After the code.") == (2, "After the code.")
    # Too short to name one sentence, or found nowhere: no citation.
    assert ids.resolve("days") is None
    assert ids.resolve("The refund window is 60 days.") is None


def test_a_close_copy_resolves_to_the_sentence_it_copies_and_a_loose_one_to_none() -> None:
    # A 1.5B model asked to copy the deciding sentence wrote it in the claim's words.
    ids = SentenceIds.of(
        [
            "Either party may terminate this Agreement, in whole or in part, upon thirty (30) "
            "days' prior written notice. Customer shall pay for all Services performed.",
            "The warranty lasts ninety (90) days.",
        ],
        flat=True,
    )
    copied = "Either party may terminate the agreement by giving 30 days' written notice."
    assert ids.resolve(copied) == (1, ids.sentences[0][0])
    assert ids.resolve("Customer must still pay Provider for all Services performed.") == (
        1,
        ids.sentences[0][1],
    )
    # Two content words name a topic, not a sentence.
    assert ids.resolve("about the warranty days") is None
    # Under two thirds of its content words in any one sentence: it names none.
    assert ids.resolve("The warranty covers hosted uptime for a year.") is None
    # As close to two sentences: which one is meant cannot be told.
    twice = SentenceIds.of(["Fees are due in 30 days. Late fees are due in 30 days too."])
    assert twice.resolve("Fees fall due within 30 days.") is None
    assert twice.resolve("Late fees fall due within 30 days.") == (1, twice.sentences[0][1])


# The sentence a reason quotes or names (the reasoned prompt, issue 45) ---------------------

LEGAL = [
    'Provider shall invoice Customer ("Customer") annually in advance. '
    "Any undisputed amount not received by the due date shall accrue interest at one percent "
    "per month.",
    "Either party may terminate this Agreement upon thirty (30) days' prior written notice.",
]


def test_a_reason_that_quotes_a_sentence_names_it_even_cut_short_at_its_end() -> None:
    ids = SentenceIds.of(LEGAL)
    whole = "The context states that Either party may terminate this Agreement upon thirty"
    assert ids.quoted_in(whole + " (30) days' prior written notice.") == (2, LEGAL[1])
    # Two thirds of the sentence, in one unbroken run, is a quote of it.
    cut = "It says: any undisputed amount not received by the due date shall accrue interest"
    assert ids.quoted_in(cut) == (1, ids.sentences[0][1])


def test_a_reason_that_quotes_too_little_or_only_shares_words_names_nothing() -> None:
    ids = SentenceIds.of(LEGAL)
    assert ids.quoted_in('The context states that Provider shall invoice Customer ("') is None
    # The claim's words restated in another order are no quote of any sentence.
    assert ids.quoted_in("Written notice of thirty days lets either party terminate.") is None
    assert ids.quoted_in("The context does not say it.") is None


def test_a_reason_that_names_a_sentence_id_cites_it_but_not_a_longer_number() -> None:
    ids = SentenceIds.of(LEGAL)
    assert ids.quoted_in("This is stated in paragraph 1.2 of the context.") == (
        1,
        ids.sentences[0][1],
    )
    assert ids.quoted_in("see 2.1, and 1.1 too") == (2, LEGAL[1])  # the first one named
    assert ids.quoted_in("interest of 1.25 percent") is None
    assert ids.quoted_in("sentence 3.1 says so") is None  # no such sentence
    # Flat ids ("7") are no dotted ids to find in a text.
    assert SentenceIds.of(LEGAL, flat=True).quoted_in("as 1.1 says") is None


def test_a_reason_that_quotes_the_deciding_clause_of_a_long_sentence_names_it() -> None:
    ids = SentenceIds.of(
        [
            "On the six-language TyQA-Lite benchmark, SPRD improves recall@20 by 7.4 points "
            "over BM25 while keeping index size under 2 GB. We release the code."
        ]
    )
    reason = "The context states that SPRD improves recall@20 by 7.4 points over BM25."
    assert ids.quoted_in(reason) == (1, ids.sentences[0][0])
