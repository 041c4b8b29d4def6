"""Conversation rows: OpenAI message lists, DeepEval and RAGAS shapes, each assistant turn a
sample whose contexts name their source, and row errors that name the turn and field."""

import json
from pathlib import Path

import pytest
from tests.support.extras import without

import vera
from vera import Conversation, DatasetRowError, Sample, Turn, load_dataset
from vera.datasets import open_dataset
from vera.datasets._conversations import conversation_from_row, read_conversations, turn_samples

WHITEBOX = "the dataset readers' own parts"

OPENAI = [
    {"role": "system", "content": "You are a support assistant."},
    {"role": "user", "content": "Where is order 42? My name is Ana."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": '{"id": 42}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "Order 42 shipped on May 3 via DHL."},
    {"role": "assistant", "content": "Order 42 shipped on May 3 via DHL."},
    {"role": "user", "content": "When will it arrive?"},
    {
        "role": "assistant",
        "content": "Order 42 shipped on May 3 via DHL. DHL delivers in 2 days.",
        "contexts": ["DHL delivers within Germany in 2 days."],
        "human_faithful": True,
    },
]


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def kinds(sample: Sample) -> list[str]:
    return [c.metadata["source_kind"] for c in sample.contexts]


def test_openai_messages_become_one_sample_per_assistant_turn(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "chats.jsonl", [{"id": "c1", "messages": OPENAI}])
    first, second = list(load_dataset(path))
    assert (first.id, second.id) == ("c1/turn-5", "c1/turn-7")
    assert first.query == "Where is order 42? My name is Ana."
    tool = first.contexts[0]
    assert (tool.metadata["tool_name"], tool.metadata["call_id"]) == ("lookup_order", "call_1")
    assert kinds(first) == ["tool", "user"]
    assert kinds(second) == ["retrieved", "earlier-turn", "user", "user"]
    # Every report shows a context's source: there it names the kind, tool and turn.
    assert [c.source for c in second.contexts] == [
        "retrieved, turn 7",
        "earlier-turn lookup_order, turn 4",
        "user, turn 2",
        "user, turn 6",
    ]
    assert second.human_faithful is True
    assert second.metadata["conversation_id"] == "c1"
    assert second.metadata["assistant_turn"] == 2


def test_a_sentence_the_assistant_already_said_is_not_verified_twice() -> None:
    _, second = turn_samples(conversation_from_row({"messages": OPENAI}, "x"))
    assert second.response == "DHL delivers in 2 days."
    assert second.metadata["repeated"] == ["Order 42 shipped on May 3 via DHL."]


def test_user_facts_can_be_left_out() -> None:
    conversation = Conversation(
        id="c",
        turns=(
            Turn(role="user", content="My order number is 42."),
            Turn(role="assistant", content="Your order number is 42."),
        ),
    )
    [counted] = turn_samples(conversation)
    [left_out] = turn_samples(conversation, user_facts=False)
    assert kinds(counted) == ["user"]
    assert left_out.contexts == ()


def test_deepeval_conversational_test_case_shape(tmp_path: Path) -> None:
    row = {
        "name": "refund",
        "scenario": "A customer asks for a refund.",
        "turns": [
            {"role": "user", "content": "Can I get a refund for order 7?"},
            {
                "role": "assistant",
                "content": "Order 7 was paid 40 EUR, refundable within 30 days.",
                "retrieval_context": ["Orders are refundable within 30 days."],
                "tools_called": [
                    {
                        "name": "get_order",
                        "input_parameters": {"id": 7},
                        "output": {"id": 7, "paid": "40 EUR"},
                    }
                ],
            },
        ],
    }
    [sample] = list(load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])))
    assert sample.id == "refund/turn-2"
    assert kinds(sample) == ["retrieved", "tool", "user"]
    assert sample.contexts[1].metadata["tool_name"] == "get_order"
    assert json.loads(sample.contexts[1].text) == {"id": 7, "paid": "40 EUR"}
    assert sample.metadata["scenario"] == "A customer asks for a refund."


def test_ragas_multi_turn_sample_shape(tmp_path: Path) -> None:
    row = {
        "user_input": [
            {"content": "What is the weather in Paris?", "type": "human", "metadata": None},
            {
                "content": "",
                "type": "ai",
                "metadata": None,
                "tool_calls": [{"name": "weather", "args": {"city": "Paris"}}],
            },
            {"content": "Paris: 18 C, cloudy.", "type": "tool", "metadata": None},
            {"content": "It is 18 C and cloudy in Paris.", "type": "ai", "metadata": None},
        ],
        "reference": "18 C and cloudy",
    }
    [sample] = list(load_dataset(write_jsonl(tmp_path / "r.jsonl", [row])))
    assert sample.contexts[0].metadata == {"source_kind": "tool", "turn": 3, "tool_name": "weather"}
    assert sample.response == "It is 18 C and cloudy in Paris."
    # Conversation-level fields other than VERA's own go to every turn's metadata.
    assert sample.metadata["reference"] == "18 C and cloudy"


@pytest.mark.parametrize(
    ("message", "field", "problem"),
    [
        ({"role": "robot", "content": "x"}, "messages[1].role", "unknown role 'robot'"),
        ({"content": "x"}, "messages[1].role", "missing"),
        ({"role": "assistant", "content": 5}, "messages[1].content", "expected text"),
        (
            {"role": "assistant", "content": "x", "contexts": 3},
            "messages[1].contexts",
            "expected a list",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c"}]},
            "messages[1].tool_calls[0].name",
            "missing",
        ),
        ({"role": "assistant", "content": "x", "human_faithful": "yes"}, None, "true or false"),
    ],
)
def test_row_errors_name_file_line_turn_and_field(
    tmp_path: Path, message: dict[str, object], field: str | None, problem: str
) -> None:
    good = {"id": "ok", "messages": [{"role": "user", "content": "hi"}]}
    bad = {"id": "bad", "messages": [{"role": "user", "content": "hi"}, message]}
    path = write_jsonl(tmp_path / "bad.jsonl", [good, bad])
    with pytest.raises(DatasetRowError) as caught:
        list(load_dataset(path))
    error = caught.value
    assert error.path == str(path) and error.location == "line 2"
    assert error.field == (field or "messages[1].human_faithful")
    assert problem in error.problem


@pytest.mark.parametrize(
    ("row", "field", "problem"),
    [
        (  # RAGAS names the role `type`: the error names the key the row has
            {"user_input": [{"type": "human", "content": "hi"}, {"type": "robot"}]},
            "user_input[1].type",
            "unknown role 'robot'",
        ),
        (
            {
                "user_input": [
                    {"type": "human", "content": "hi"},
                    {"type": "ai", "content": "", "tool_calls": [{"args": {}}]},
                ]
            },
            "user_input[1].tool_calls[0].name",
            "missing",
        ),
        (  # DeepEval
            {
                "turns": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "x", "tools_called": [{"output": "o"}]},
                ]
            },
            "turns[1].tools_called[0].name",
            "missing",
        ),
        (
            {
                "turns": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "x", "retrieval_context": 5},
                ]
            },
            "turns[1].retrieval_context",
            "expected a list",
        ),
    ],
)
def test_ragas_and_deepeval_row_errors_name_the_line_turn_and_field(
    tmp_path: Path, row: dict[str, object], field: str, problem: str
) -> None:
    good = {"id": "ok", "messages": [{"role": "user", "content": "hi"}]}
    path = write_jsonl(tmp_path / "bad.jsonl", [good, row])
    with pytest.raises(DatasetRowError) as caught:
        list(load_dataset(path))
    error = caught.value
    assert (error.path, error.location, error.field) == (str(path), "line 2", field)
    assert problem in error.problem


def test_skip_invalid_logs_a_bad_conversation_and_keeps_the_others(tmp_path: Path) -> None:
    bad = {"id": "bad", "messages": [{"role": "robot", "content": "x"}]}
    path = write_jsonl(tmp_path / "d.jsonl", [bad, {"id": "ok", "messages": OPENAI}])
    dataset = load_dataset(path, skip_invalid=True)
    assert [s.id for s in dataset] == ["ok/turn-5", "ok/turn-7"]
    [invalid] = dataset.invalid_rows
    assert (invalid.location, invalid.field) == ("line 1", "messages[0].role")


def test_python_conversation_objects_and_message_lists() -> None:
    conversation = Conversation(
        id="py",
        turns=(
            Turn(role="user", content="What does the Pro plan cost?"),
            Turn(
                role="assistant",
                content="The Pro plan costs 20 dollars a month.",
                tool_results=["Pro plan: 20 dollars per month."],
            ),
        ),
    )
    [from_object] = list(open_dataset(conversation))
    assert kinds(from_object) == ["tool", "user"]
    samples = list(open_dataset(OPENAI))
    assert [s.id for s in samples] == ["conversation-1/turn-5", "conversation-1/turn-7"]
    assert vera.Conversation is Conversation


def test_a_turn_that_only_repeats_is_left_out_and_ids_stay_unique(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello, how can I help?", "contexts": ["greeting"]},
        {"role": "user", "content": "Hi again"},
        {"role": "assistant", "content": "Hello, how can I help?"},
    ]
    samples = list(load_dataset(write_jsonl(tmp_path / "d.jsonl", [{"messages": messages}])))
    assert [s.id for s in samples] == ["conversation-1/turn-2"]


FIXTURES = Path(__file__).parents[1] / "support" / "conversations"


def test_a_file_ragas_wrote_reads_turn_by_turn() -> None:
    first, second = list(load_dataset(FIXTURES / "ragas_multi_turn.jsonl"))
    assert first.response == "It is 18 C and cloudy in Paris."
    assert first.contexts[0].metadata["tool_name"] == "weather"
    assert second.query == "And tomorrow?"
    assert [(c.metadata["source_kind"], c.metadata.get("tool_name")) for c in second.contexts] == [
        ("tool", "forecast"),
        ("earlier-turn", "weather"),
        ("user", None),
        ("user", None),
    ]


def test_a_file_deepeval_wrote_reads_turn_by_turn() -> None:
    first, second = list(load_dataset(FIXTURES / "deepeval_conversation.jsonl"))
    assert first.id == "refund/turn-2"
    assert kinds(first) == ["retrieved", "tool", "user"]
    assert json.loads(first.contexts[1].text) == {"id": 7, "total": "40 EUR"}
    assert kinds(second) == ["retrieved", "earlier-turn", "earlier-turn", "user", "user"]
    report = vera.evaluate(FIXTURES / "deepeval_conversation.jsonl")
    assert [r.id for r in report.samples] == ["refund/turn-2", "refund/turn-4"]


def test_a_dataframe_column_of_message_lists() -> None:
    pandas = pytest.importorskip("pandas", reason=without("pandas"))
    frame = pandas.DataFrame([{"id": "df", "messages": OPENAI}])
    assert [s.id for s in open_dataset(frame)] == ["df/turn-5", "df/turn-7"]
    # The conversations themselves too (vera conversations' and evaluate_conversations' route):
    # iterated as is, a DataFrame would give its column names.
    [conversation] = read_conversations(frame)
    assert (conversation.id, len(conversation.turns)) == ("df", len(OPENAI))


def test_a_dataframe_read_back_from_parquet_holds_numpy_arrays_and_reads_the_same(
    tmp_path: Path,
) -> None:
    pandas = pytest.importorskip("pandas", reason=without("pandas"))
    pytest.importorskip("pyarrow", reason=without("parquet"))
    pandas.DataFrame([{"id": "pq", "messages": OPENAI}]).to_parquet(tmp_path / "c.parquet")
    frame = pandas.read_parquet(tmp_path / "c.parquet")
    assert type(frame["messages"][0]).__module__ == "numpy"
    first, second = open_dataset(frame)
    assert (first.id, kinds(first)) == ("pq/turn-5", ["tool", "user"])
    assert kinds(second) == ["retrieved", "earlier-turn", "user", "user"]
    assert [c.id for c in read_conversations(frame)] == ["pq"]


def test_a_hugging_face_dataset_column_of_message_lists() -> None:
    datasets = pytest.importorskip("datasets", reason=without("hf"))
    # Arrow gives every message every key, None where a message had none.
    data = datasets.Dataset.from_list([{"id": "hf", "messages": OPENAI}])
    assert data[0]["messages"][0]["tool_calls"] is None
    first, second = open_dataset(data)
    assert (first.id, kinds(first)) == ("hf/turn-5", ["tool", "user"])
    assert kinds(second) == ["retrieved", "earlier-turn", "user", "user"]
    assert [c.id for c in read_conversations(data)] == ["hf"]


def test_a_bad_message_in_a_dataframe_names_the_row_and_the_field() -> None:
    pandas = pytest.importorskip("pandas", reason=without("pandas"))
    bad = [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]
    frame = pandas.DataFrame([{"id": "ok", "messages": OPENAI}, {"id": "bad", "messages": bad}])
    for read in (read_conversations, lambda data: list(open_dataset(data))):
        with pytest.raises(DatasetRowError) as caught:
            read(frame)
        error = caught.value
        assert (error.path, error.location, error.field) == (
            "<DataFrame>",
            "row 2",
            "messages[1].role",
        )
        assert "robot" in error.problem


def test_messages_in_a_column_of_another_name_are_mapped_or_refused(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas", reason=without("pandas"))
    frame = pandas.DataFrame([{"id": "df", "chat": OPENAI}])
    # Read as a sample, the row would only "need a pipeline": refused, naming the mapping.
    with pytest.raises(DatasetRowError) as caught:
        list(open_dataset(frame))
    assert (caught.value.location, caught.value.field) == ("row 1", "chat")
    assert "--field messages=chat" in caught.value.problem
    with pytest.raises(DatasetRowError, match="column 'chat' holds a list of messages"):
        read_conversations(frame)
    mapped = {"messages": "chat"}
    assert [s.id for s in open_dataset(frame, fields=mapped)] == ["df/turn-5", "df/turn-7"]
    assert [c.id for c in read_conversations(frame, fields=mapped)] == ["df"]
    # A bad message is named by the user's column.
    path = write_jsonl(tmp_path / "c.jsonl", [{"chat": [{"role": "robot", "content": "x"}]}])
    with pytest.raises(DatasetRowError) as bad:
        list(load_dataset(path, fields=mapped))
    assert (bad.value.location, bad.value.field) == ("line 1", "chat[0].role")


def test_a_sample_with_a_message_list_beside_its_answer_stays_a_sample(tmp_path: Path) -> None:
    row = {"query": "Where is order 42?", "response": "It shipped.", "history": OPENAI}
    [sample] = list(load_dataset(write_jsonl(tmp_path / "s.jsonl", [row])))
    assert sample.response == "It shipped." and sample.metadata["history"][1]["role"] == "user"
