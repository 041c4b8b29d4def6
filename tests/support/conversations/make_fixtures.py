"""How the files beside this script were written: by RAGAS 0.4.3 (`EvaluationDataset.to_jsonl`)
and DeepEval 4.3.1 (`ConversationalTestCase.model_dump(mode="json")`), each library's own
serialisation. Neither library is in VERA's environment (RAGAS 0.4.3 needs
langchain-community < 0.4, which the shared test environment does not pin), so the files are
committed and this script is run by hand in a separate environment:

    python -m venv /tmp/libs && /tmp/libs/bin/pip install ragas deepeval 'langchain-community<0.4'
    /tmp/libs/bin/python tests/support/conversations/make_fixtures.py
"""

import json
from pathlib import Path

HERE = Path(__file__).parent


def ragas_file() -> None:
    from ragas.dataset_schema import EvaluationDataset, MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    sample = MultiTurnSample(
        user_input=[
            HumanMessage(content="What is the weather in Paris?"),
            AIMessage(content="", tool_calls=[ToolCall(name="weather", args={"city": "Paris"})]),
            ToolMessage(content="Paris: 18 C, cloudy."),
            AIMessage(content="It is 18 C and cloudy in Paris."),
            HumanMessage(content="And tomorrow?"),
            AIMessage(
                content="",
                tool_calls=[ToolCall(name="forecast", args={"city": "Paris", "day": "tomorrow"})],
            ),
            ToolMessage(content="Paris tomorrow: 21 C, sunny."),
            AIMessage(content="Tomorrow it will be 21 C and sunny in Paris."),
        ],
        reference="18 C and cloudy today, 21 C and sunny tomorrow",
    )
    EvaluationDataset(samples=[sample]).to_jsonl(str(HERE / "ragas_multi_turn.jsonl"))


def deepeval_file() -> None:
    from deepeval.test_case import ConversationalTestCase, ToolCall, Turn

    case = ConversationalTestCase(
        name="refund",
        scenario="A customer asks about a refund.",
        turns=[
            Turn(role="user", content="Can I get a refund for order 7?"),
            Turn(
                role="assistant",
                content="Order 7 cost 40 EUR and can be refunded within 30 days of delivery.",
                retrieval_context=["Orders can be refunded within 30 days of delivery."],
                tools_called=[
                    ToolCall(
                        name="get_order",
                        input_parameters={"id": 7},
                        output={"id": 7, "total": "40 EUR"},
                    )
                ],
            ),
            Turn(role="user", content="It was delivered 10 days ago."),
            Turn(
                role="assistant",
                content="Then you can still get your 40 EUR back.",
                retrieval_context=["Orders can be refunded within 30 days of delivery."],
            ),
        ],
    )
    (HERE / "deepeval_conversation.jsonl").write_text(
        json.dumps(case.model_dump(mode="json")) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    ragas_file()
    deepeval_file()
