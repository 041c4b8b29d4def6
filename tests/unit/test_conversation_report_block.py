"""A run over conversation turns scores the conversations in its own report: the typed
`conversations` block, and each turn result's place in its conversation; a run over anything
else keeps its JSON as it was, with neither."""

import json
from pathlib import Path

import pytest
from rich.console import Console
from starlette.testclient import TestClient

import vera
from vera import (
    ConfigError,
    Conversation,
    Report,
    SampleResult,
    Turn,
    create_app,
    evaluate_conversations,
)
from vera._types import ConversationSummary, PartialRule, TurnRef
from vera._viewer import run_url
from vera.datasets import open_dataset
from vera.datasets._conversations import consistency_checks, turn_samples
from vera.judges import OfflineJudge
from vera.render import render_html
from vera.render._console import print_summary

WHITEBOX = "the viewer's own parts"


def _chat() -> Conversation:
    return Conversation(
        id="order-42",
        turns=(
            Turn(role="user", content="Where is order 42?"),
            Turn(role="tool", content="Order 42 shipped on May 3 via DHL.", tool_name="track"),
            Turn(role="assistant", content="Order 42 shipped on May 3 via DHL."),
            Turn(role="user", content="Which carrier again?"),
            Turn(role="assistant", content="Order 42 shipped on May 9 via UPS."),
        ),
    )


def test_a_run_over_turns_scores_each_conversation() -> None:
    report = vera.evaluate(turn_samples(_chat()))
    block = report.conversations
    assert isinstance(block, ConversationSummary)
    [chat] = block.conversations
    assert chat.id == "order-42"
    assert chat.turns == (3, 5)
    assert chat.unfaithful_turns == (5,)
    assert chat.first_unfaithful_turn == 5
    assert chat.faithful_turns == 0.5
    assert (block.faithful_turns, block.scored_turns, block.unscored_turns) == (0.5, 2, 0)
    assert [r.turn for r in report.samples] == [
        TurnRef(conversation_id="order-42", turn=3),
        TurnRef(conversation_id="order-42", turn=5),
    ]


def test_the_block_survives_json_and_the_store_format() -> None:
    report = vera.evaluate(turn_samples(_chat()))
    data = json.loads(report.to_json())
    assert data["conversations"]["conversations"][0]["first_unfaithful_turn"] == 5
    assert data["samples"][1]["turn"] == {"conversation_id": "order-42", "turn": 5}
    assert Report.model_validate(data).conversations == report.conversations
    stored = report.samples[1].model_dump_json()  # what the run history keeps
    assert SampleResult.model_validate_json(stored).turn == report.samples[1].turn


def test_turns_not_scored_on_faithfulness_are_no_faithful_turns() -> None:
    # Without faithfulness nothing says whether a turn is faithful: no share, never 0 or 1.
    report = vera.evaluate(turn_samples(_chat()), metrics=["answer_relevance"])
    block = report.conversations
    assert block is not None
    assert (block.faithful_turns, block.scored_turns, block.unscored_turns) == (None, 0, 2)
    assert block.conversations[0].first_unfaithful_turn is None


def test_an_ordinary_run_has_neither_key_in_its_json() -> None:
    report = vera.evaluate("example")
    data = report.to_dict()
    assert report.conversations is None
    assert "conversations" not in data
    assert all("turn" not in sample for sample in data["samples"])


def test_vera_eval_on_the_bundled_conversations_writes_the_block(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = vera.run_evaluation("conversations", history=False, reports={"json": out})
    data = json.loads(out.read_text(encoding="utf-8"))
    block = data["conversations"]
    assert len(block["conversations"]) == 12
    assert block["scored_turns"] == 36
    assert result.report.conversations is not None
    assert block["faithful_turns"] == result.report.conversations.faithful_turns


UNFAITHFUL_TURN_GATE = (
    "unfaithful answers: 1 of 2 answers has an unsupported or contradicted claim "
    f"(PARTIALLY_SUPPORTED counts as {OfflineJudge.partial_rule.value}); --max-unfaithful 0 "
    "allows 0"
)
"""The answer-verdict gate on `_chat()`: its turn 5 is unfaithful, and by default no
unfaithful answer passes (conversation turns are answers too)."""


def test_the_faithful_turn_gate_names_each_first_unfaithful_turn() -> None:
    failed = vera.run_evaluation(turn_samples(_chat()), min_faithful_turns=0.9)
    assert failed.exit_code == 1
    assert failed.gate_failures == (
        UNFAITHFUL_TURN_GATE,
        "faithful turns: 0.500 of 2 scored turns is below 0.900; first unfaithful: order-42 turn 5",
    )
    # With that turn tolerated, the faithful-turn share alone decides.
    passed = vera.run_evaluation(turn_samples(_chat()), min_faithful_turns=0.5, max_unfaithful=1)
    assert passed.exit_code == 0


def test_a_conversation_gate_on_a_run_without_turns_is_refused() -> None:
    # A gate on a conversation score over plain samples asks for what the data cannot give:
    # bad usage (exit 2 from vera eval), never a pass.
    for gate in ({"min_faithful_turns": 0.1}, {"min_consistency": 0.5}):
        with pytest.raises(ConfigError, match="no sample of this run is a conversation turn"):
            vera.run_evaluation("example", **gate)  # type: ignore[arg-type]


def test_a_conversation_run_without_faithfulness_fails_its_gates() -> None:
    # Conversations, but nothing measured: no turn scored on faithfulness, no claim checked.
    result = vera.run_evaluation(
        turn_samples(_chat()),
        metrics=["answer_relevance"],
        min_faithful_turns=0.1,
        min_consistency=0.1,
    )
    assert result.exit_code == 1
    assert any("scored none on faithfulness" in f for f in result.gate_failures)
    assert any("checked no claim" in f for f in result.gate_failures)
    assert result.consistency is None


def test_the_html_report_and_the_console_show_the_conversations() -> None:
    report = vera.evaluate(turn_samples(_chat()))
    page = render_html(report)
    assert '<section id="conversations"' in page
    assert '<tr data-conversation="order-42">' in page
    assert '<span class="badge bad" title="order-42/turn-5">5</span>' in page
    console = Console(record=True, width=200)
    print_summary(report, console, Console(stderr=True, quiet=True))
    text = console.export_text()
    assert (
        "Conversations: 1, faithful turns 0.500 (the answer verdict: no claim unsupported" in text
    )
    assert "Consistency 0.000 (claims that contradict no earlier assistant turn, over 1" in text
    assert "First unfaithful turn: order-42 turn 5" in text


def test_an_ordinary_html_report_has_no_conversation_section() -> None:
    assert 'id="conversations"' not in render_html(vera.evaluate("example"))


def test_a_conversation_source_does_not_count_its_rows_as_samples(tmp_path: Path) -> None:
    # Each conversation row is a sample a turn: a row count would show "36/12 samples".
    assert vera.load_dataset("conversations").size_hint() is None
    rows = [{"messages": [{"role": "user", "content": "Hi"}]}]
    (tmp_path / "c.json").write_text(json.dumps(rows), encoding="utf-8")
    assert vera.load_dataset(tmp_path / "c.json").size_hint() is None
    assert open_dataset([_chat()]).size_hint() is None
    assert vera.load_dataset("example").size_hint() == 28


def test_vera_view_shows_a_stored_conversation_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    stored = evaluate_conversations(_chat(), history=path)
    assert stored.run_id is not None
    with TestClient(create_app(path)) as client:
        page = client.get(run_url(stored.run_id)).text
    assert '<tr data-conversation="order-42">' in page
    assert '<span class="badge bad" title="order-42/turn-5">5</span>' in page


def _partly_supported() -> Conversation:
    return Conversation(
        id="export",
        turns=(
            Turn(role="user", content="Can I export to Excel?"),
            Turn(
                role="assistant",
                content="Project data can be exported directly as an Excel file.",
                contexts=(vera.Context(text="Project data can be exported as CSV or JSON."),),
            ),
        ),
    )


@pytest.mark.parametrize(
    ("rule", "faithful"), [(PartialRule.SUPPORTED, True), (PartialRule.UNSUPPORTED, False)]
)
def test_a_partly_supported_turn_counts_by_the_judges_rule_whatever_its_score(
    rule: PartialRule, faithful: bool
) -> None:
    # One claim PARTIALLY_SUPPORTED scores 0.5 and passes faithfulness' threshold of 0.5.
    # Whether the turn is faithful is its answer verdict, as for any answer: the judge's rule
    # for PARTIALLY_SUPPORTED decides, in a run's block as in evaluate_conversations, and its
    # score keeps its formula.
    judge = OfflineJudge()
    judge.partial_rule = rule
    report = vera.evaluate(turn_samples(_partly_supported()), judge=judge)
    [result] = report.samples
    assert [c.verdict for c in result.claims] == [vera.Verdict.PARTIALLY_SUPPORTED]
    assert result.results["faithfulness"].score == 0.5
    assert result.results["faithfulness"].passed is True
    assert result.verdict is not None and result.verdict.passed is faithful
    block = report.conversations
    assert block is not None
    unfaithful = () if faithful else (2,)
    assert (block.faithful_turns, block.conversations[0].unfaithful_turns) == (
        float(faithful),
        unfaithful,
    )
    [score] = evaluate_conversations(_partly_supported(), judge=judge).conversations
    assert (score.faithful_turns, score.first_unfaithful_turn) == (
        float(faithful),
        None if faithful else 2,
    )
    assert score.turns[0].faithful is faithful and score.turns[0].faithfulness == 0.5


def test_a_run_over_turns_checks_consistency_as_evaluate_conversations_does() -> None:
    # One code path: vera eval's block counts the same contradictions of earlier turns, per
    # conversation, as vera conversations, and a turn that contradicts one is unfaithful.
    result = vera.run_evaluation("conversations")
    block = result.report.conversations
    assert block is not None and result.consistency is not None
    scores = {c.id: c for c in evaluate_conversations("conversations").conversations}
    for conversation in block.conversations:
        score = scores[conversation.id]
        assert conversation.consistency == score.consistency, conversation.id
        assert conversation.checked_claims == score.checked_claims
        assert conversation.inconsistent_turns == tuple(
            t.turn for t in score.turns if t.inconsistent
        )
        assert conversation.faithful_turns == score.faithful_turns
        assert conversation.first_unfaithful_turn == score.first_unfaithful_turn
    assert block.checked_claims == 24
    assert block.consistency == 1 - 5 / 24
    data = json.loads(result.report.to_json())["conversations"]
    assert data["consistency"] == block.consistency
    assert data["conversations"][1]["inconsistent_turns"] == [7]
    # The claims behind those turns, as vera conversations names them.
    named = {
        (t.turn, c.text) for score in scores.values() for t in score.turns for c in t.inconsistent
    }
    kept = {
        (c.turn, c.text)
        for conversation in block.conversations
        for c in conversation.inconsistent_claims
    }
    assert kept == named and len(kept) == 5
    assert {c["turn"] for c in data["conversations"][1]["inconsistent_claims"]} == {7}


def test_the_consistency_gate_names_each_inconsistent_conversation() -> None:
    failed = vera.run_evaluation(turn_samples(_chat()), min_consistency=0.5)
    assert failed.exit_code == 1
    assert failed.gate_failures == (
        UNFAITHFUL_TURN_GATE,
        "consistency: order-42 0.000 is below 0.500; turns that contradict an earlier one: 5",
    )
    passed = vera.run_evaluation(turn_samples(_chat()), min_consistency=0.0, max_unfaithful=1)
    assert passed.exit_code == 0


def _team_chats(tmp_path: Path) -> Path:
    def chat(cid: str, team: str, answer: str) -> dict[str, object]:
        return {
            "id": cid,
            "metadata": {"team": team},
            "messages": [
                {"role": "user", "content": "Where is order 42?"},
                {"role": "tool", "tool_call_id": "t", "content": "Order 42 shipped on May 3."},
                {"role": "assistant", "content": "Order 42 shipped on May 3."},
                {"role": "user", "content": "When again?"},
                {"role": "assistant", "content": answer},
            ],
        }

    rows = [
        chat("a1", "billing", "It shipped on May 3."),
        chat("a2", "billing", "Order 42 shipped on May 9."),
        chat("b1", "shipping", "It shipped on May 3."),
    ]
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_group_by_a_conversation_field_breaks_down_turns_and_conversations(
    tmp_path: Path,
) -> None:
    # The row's metadata is every turn's, so --group-by team groups the turn-level scores
    # (the breakdowns) and the conversation-level ones (the block's groups) alike.
    report = vera.evaluate(_team_chats(tmp_path), group_by=["team"])
    assert set(report.breakdowns["team"]) == {"billing", "shipping"}
    block = report.conversations
    assert block is not None
    billing, shipping = block.groups["team"]["billing"], block.groups["team"]["shipping"]
    assert (billing.conversations, billing.scored_turns, billing.faithful_turns) == (2, 4, 0.75)
    assert (billing.checked_claims, billing.consistency) == (2, 0.5)
    assert (shipping.conversations, shipping.faithful_turns, shipping.consistency) == (1, 1.0, 1.0)
    assert {c.id: c.group_values for c in block.conversations}["a2"] == {"team": "billing"}
    console = Console(record=True, width=200)
    print_summary(report, console, Console(stderr=True, quiet=True))
    assert (
        "Conversations by team: billing (2): faithful turns 0.750, consistency 0.500; "
        "shipping (1): faithful turns 1.000, consistency 1.000"
    ) in console.export_text()
    data = json.loads(report.to_json())["conversations"]["groups"]["team"]
    assert data["billing"]["faithful_turns"] == 0.75


def test_consistency_checks_are_the_turns_against_earlier_turns_and_are_not_checked_again() -> None:
    turns = turn_samples(_chat())
    [check] = consistency_checks([*turns, vera.Sample(id="plain", query="q", response="r")])
    assert check.id == "order-42/turn-5"
    assert [c.text for c in check.contexts] == ["Order 42 shipped on May 3 via DHL."]
    assert [c.metadata["source_kind"] for c in check.contexts] == ["assistant"]
    assert consistency_checks([check]) == []
    # A run over the checks themselves makes no consistency pass of its own.
    assert vera.run_evaluation([check]).consistency is None
