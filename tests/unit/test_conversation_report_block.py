"""A run over conversation turns scores the conversations in its own report: the typed
`conversations` block, and each turn result's place in its conversation; a run over anything
else keeps its JSON as it was, with neither."""

import json
from pathlib import Path

from rich.console import Console
from starlette.testclient import TestClient

import vera
from vera import Conversation, Turn
from vera.conversations import evaluate_conversations
from vera.datasets import open_dataset, turn_samples
from vera.render import print_summary, render_html
from vera.types import ConversationSummary, Report, SampleResult, TurnRef
from vera.viewer import create_app, run_url


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


def test_the_faithful_turn_gate_names_each_first_unfaithful_turn() -> None:
    failed = vera.run_evaluation(turn_samples(_chat()), min_faithful_turns=0.9)
    assert failed.exit_code == 1
    assert failed.gate_failures == (
        "faithful turns: 0.500 of 2 scored turns is below 0.900; first unfaithful: order-42 turn 5",
    )
    assert vera.run_evaluation(turn_samples(_chat()), min_faithful_turns=0.5).exit_code == 0


def test_the_faithful_turn_gate_fails_a_run_without_turns() -> None:
    # The gate measured nothing on a dataset of plain samples: that is no pass.
    result = vera.run_evaluation("example", min_faithful_turns=0.1)
    assert result.exit_code == 1
    assert any("scored none on faithfulness" in f for f in result.gate_failures)


def test_the_html_report_and_the_console_show_the_conversations() -> None:
    report = vera.evaluate(turn_samples(_chat()))
    page = render_html(report)
    assert '<section id="conversations"' in page
    assert '<tr data-conversation="order-42">' in page
    assert '<span class="badge bad" title="order-42/turn-5">5</span>' in page
    console = Console(record=True, width=200)
    print_summary(report, console, Console(stderr=True, quiet=True))
    text = console.export_text()
    assert "Conversations: 1, faithful turns 0.500 (faithfulness passes, over 2 scored" in text
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


def test_a_partly_supported_turn_is_no_faithful_turn_though_its_score_passes() -> None:
    # One claim PARTIALLY_SUPPORTED scores 0.5 and passes faithfulness' threshold of 0.5, but
    # part of what the turn says has no source: the turn is not faithful, in a run's block as
    # in evaluate_conversations, and its score keeps its formula.
    report = vera.evaluate(turn_samples(_partly_supported()))
    [result] = report.samples
    assert [c.verdict for c in result.claims] == [vera.Verdict.PARTIALLY_SUPPORTED]
    assert result.results["faithfulness"].score == 0.5
    assert result.results["faithfulness"].passed is True
    block = report.conversations
    assert block is not None
    assert (block.faithful_turns, block.conversations[0].unfaithful_turns) == (0.0, (2,))
    [score] = evaluate_conversations(_partly_supported()).conversations
    assert (score.faithful_turns, score.first_unfaithful_turn) == (0.0, 2)
    assert score.turns[0].faithful is False and score.turns[0].faithfulness == 0.5
