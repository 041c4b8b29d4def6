"""Conversations verified turn by turn through the run: each verdict names its source kind,
repeats are not verified twice, inconsistencies with earlier turns are found, and the
conversation aggregates never turn "nothing measured" into a pass."""

from pathlib import Path

import pytest
from tests.support.docs import run_example

from vera import ConfigError, Conversation, DatasetRowError, Turn, Verdict, evaluate_conversations
from vera._types import PartialRule, SourceKind
from vera.judges import OfflineJudge

WHITEBOX = "the report's parts and the secret guards"


def _conversation() -> Conversation:
    return Conversation(
        id="c",
        turns=(
            Turn(role="user", content="Where is order 42? I live in Berlin."),
            Turn(role="tool", content="Order 42 shipped on May 3 via DHL.", tool_name="track"),
            Turn(role="assistant", content="Order 42 shipped on May 3 via DHL."),
            Turn(role="user", content="How long does delivery take?"),
            Turn(
                role="assistant",
                content="DHL delivers within Germany in 2 days.",
                contexts=("DHL delivers within Germany in 2 days.",),
            ),
            Turn(role="user", content="Thanks."),
            Turn(
                role="assistant", content="Order 42 shipped on May 3 via DHL. You live in Berlin."
            ),
            Turn(role="user", content="Which carrier again?"),
            Turn(role="assistant", content="Order 42 shipped on May 9 via UPS."),
        ),
    )


def test_each_verdict_names_the_source_that_supports_it() -> None:
    [score] = evaluate_conversations(_conversation()).conversations
    first, second, third, fourth = score.turns
    assert [c.source_kind for c in first.claims] == [SourceKind.TOOL]
    assert first.claims[0].tool_name == "track"
    assert [c.source_kind for c in second.claims] == [SourceKind.RETRIEVED]
    # The repeated sentence is not verified again; what is new rests on the user's word.
    assert third.repeated == ("Order 42 shipped on May 3 via DHL.",)
    assert [c.source_kind for c in third.user_only] == [SourceKind.USER]
    assert fourth.claims[0].verdict is Verdict.CONTRADICTED
    assert fourth.claims[0].source_kind is SourceKind.EARLIER_TURN


def test_aggregates_first_unfaithful_turn_and_consistency() -> None:
    [score] = evaluate_conversations(_conversation()).conversations
    assert [t.flagged for t in score.turns] == [False, False, False, True]
    assert score.faithful_turns == pytest.approx(3 / 4)
    assert score.first_unfaithful_turn == 9
    # Turn 9 contradicts turn 3's own words, and no source confirms it.
    assert [c.text for c in score.turns[3].inconsistent] == ["Order 42 shipped on May 9 via UPS."]
    assert score.turns[3].inconsistent[0].source_kind is SourceKind.ASSISTANT
    assert score.consistency is not None and score.consistency < 1.0


def test_user_facts_off_leaves_a_claim_on_the_users_word_without_evidence() -> None:
    [score] = evaluate_conversations(_conversation(), user_facts=False).conversations
    third = score.turns[2]
    assert third.user_only == ()
    assert third.claims[0].verdict is Verdict.NO_EVIDENCE
    assert third.flagged is True


def test_one_turn_has_no_consistency_to_measure() -> None:
    conversation = Conversation(
        id="one",
        turns=(
            Turn(role="user", content="What does Pro cost?"),
            Turn(role="assistant", content="Pro costs 20 dollars.", contexts=("Pro: 20 dollars.",)),
        ),
    )
    report = evaluate_conversations(conversation)
    [score] = report.conversations
    assert score.consistency is None and report.consistency is None
    assert score.checked_claims == 0


def test_nothing_to_verify_is_refused_not_passed() -> None:
    only_user = Conversation(id="u", turns=(Turn(role="user", content="hello"),))
    with pytest.raises(ConfigError, match="no assistant turn"):
        evaluate_conversations(only_user)
    with pytest.raises(DatasetRowError, match="not a conversation"):
        evaluate_conversations([{"query": "q", "response": "r"}])


def test_bundled_conversations_offline_judge_figures() -> None:
    # The figures docs/conversations.md publishes; a change to the offline judge or the data
    # that moves them must update the page too.
    report = evaluate_conversations("conversations")
    turns = [t for c in report.conversations for t in c.turns]
    planted = [t for t in turns if t.human_faithful is False]
    clean = [t for t in turns if t.human_faithful is not False]
    assert (len(planted), len(clean)) == (9, 27)
    missed = sorted(t.sample_id for t in planted if not t.flagged)
    failed = sorted(t.sample_id for t in clean if t.flagged)
    # The offline judge's PARTIALLY_SUPPORTED counts as supported (its declared rule,
    # `OfflineJudge.partial_rule`): conv-09/turn-11 (a comparison of two stated counts) and
    # conv-12/turn-5 are then faithful, and so is conv-11/turn-7, which names a format
    # ("Excel") the sources do not but whose words the judge finds mostly covered: the one
    # planted turn the rule misses. conv-08/turn-7 gives the Team plan the Business plan's
    # 3000 requests of one listing sentence: contradicted.
    assert OfflineJudge.partial_rule is PartialRule.SUPPORTED
    assert missed == ["conv-11/turn-7"]
    # conv-03/turn-5 ("No," opening an answer) and conv-07/turn-5 (a difference of two stated
    # quantities) are read as the offline judge now reads them (issue 38): no clean turn fails.
    assert failed == []
    by_id = {t.sample_id: t for t in turns}
    assert [c.verdict for c in by_id["conv-08/turn-7"].claims] == [Verdict.CONTRADICTED]
    assert [c.verdict for c in by_id["conv-11/turn-7"].claims] == [Verdict.PARTIALLY_SUPPORTED]
    assert by_id["conv-11/turn-7"].faithfulness == 0.5 and not by_id["conv-11/turn-7"].flagged
    assert report.faithful_turns == 28 / 36


@pytest.mark.slow
def test_the_docs_example_runs(tmp_path: Path) -> None:
    done = run_example("conversations.md", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "0.5 5 0.0"
