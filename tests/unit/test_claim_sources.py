"""Each claim in a report names the source of the context its verdict cites: a document's
source, or for a conversation turn where its support came from (a tool's result, the turn's
own retrieval, an earlier turn, the user's words)."""

from __future__ import annotations

import json

import vera
from vera import Context, Sample
from vera.datasets._conversations import read_conversations, turn_samples

WHITEBOX = "how conversations become turn samples and consistency checks"

CHAT = {
    "id": "order-42",
    "messages": [
        {"role": "user", "content": "Where is order 42?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "track_order", "arguments": '{"order": 42}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_7", "content": "Order 42 shipped on May 3 via DHL."},
        {"role": "assistant", "content": "Order 42 shipped on May 3 via DHL."},
    ],
}


def test_a_turn_claim_names_the_tool_result_that_supports_it() -> None:
    [conversation] = read_conversations([CHAT])
    report = vera.evaluate(turn_samples(conversation))
    [claim] = [c for s in report.samples for c in s.claims]
    assert claim.verdict == "FULLY_SUPPORTED"
    assert claim.source is not None and claim.source.startswith("tool track_order, turn ")
    written = json.loads(report.to_json())
    assert written["samples"][0]["claims"][0]["source"] == claim.source


def test_a_document_source_is_named_and_a_context_without_one_leaves_the_key_out() -> None:
    named = Sample(
        id="a",
        response="Paris is the capital of France.",
        contexts=[Context(text="Paris is the capital of France.", source="atlas.pdf")],
    )
    bare = Sample(
        id="b", response="Paris is the capital of France.", contexts=["Paris is in France."]
    )
    report = vera.evaluate([named, bare])
    claims = {s.id: s.claims for s in report.samples}
    assert [c.source for c in claims["a"]] == ["atlas.pdf"]
    written = {s["id"]: s for s in json.loads(report.to_json())["samples"]}
    assert all("source" not in c for c in written["b"]["claims"])
