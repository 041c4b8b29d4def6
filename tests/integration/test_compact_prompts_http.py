"""The compact prompts cost fewer tokens than the ones before them, over real HTTP with the real
`openai` SDK against a server on 127.0.0.1 that counts each request's tokens (four characters
a token, the schema sent with it included) and each reply's, and reports them as `usage`.

The "before" run uses the previous bundled prompts (verify_claims/3, extract_claims/3, kept
in tests/support/prompts_v3) as a prompts directory, as a user's override would: their
named-field replies are still read. The model is the repository's scripted one, answering
each prompt in the format it asks for (claims by reference where the answer's sentences are
numbered, verdict rows where the prompt asks for rows); only the format differs, never the
verdicts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_reply, section

import vera
from vera.judges import LLMJudge
from vera.providers import ManagedChatModel
from vera.providers._openai import OpenAIChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

BEFORE = Path(__file__).resolve().parents[1] / "support" / "prompts_v3"
SAMPLES = [
    vera.Sample(
        id=f"s{i}",
        query="What is the refund policy?",
        response=f"The refund window is {days} days. Refunds go to the original card.",
        contexts=[
            "Refunds are issued to the original card. Refunds take 5 days to arrive.",
            f"The refund window is {days} days. Returns need a receipt from the store.",
        ],
    )
    for i, days in enumerate((30, 60, 30))
]


def _tokens(text: str) -> int:
    return len(text) // 4


def counting_model(request: Recorded) -> Reply:
    """The scripted model's verdicts in the format the prompt asks for, with usage counted."""
    body = request.json
    prompt = str(body["messages"][-1]["content"])
    reply = scripted_reply(prompt)
    if "verdicts" in reply:
        for verdict in reply["verdicts"]:  # a reason only where the verdict is not F
            if verdict["verdict"] == "FULLY_SUPPORTED":
                verdict.pop("reason", None)
        if '{"v": [' in prompt:
            rows = [[v["claim"], v["verdict"][0], v["sentence"]] for v in reply["verdicts"]]
            reply = {"v": [[*r, "differs"] if r[1] == "C" else r for r in rows]}
    if "<answer>" in prompt and re.match(r"1 ", section(prompt, "answer")):
        # Each of these answers' sentences is one claim as it stands: cited by its number.
        reply = {"claims": list(range(1, len(reply["claims"]) + 1))}
    sent = json.dumps(body["messages"]) + json.dumps(body.get("response_format"))
    text = json.dumps(reply)
    return ok_openai(text, prompt_tokens=_tokens(sent), completion_tokens=_tokens(text))


def run(loopback: LoopbackServer, prompts_dir: Path | None) -> tuple[vera.Report, dict[str, Any]]:
    chat = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url=loopback.openai_url, timeout=5)
    model = ManagedChatModel(chat)
    judge = LLMJudge(model, prompts_dir=prompts_dir)
    report = vera.evaluate(SAMPLES, ["faithfulness"], judge=judge, concurrency=1)
    return report, model.ledger.summary()


def test_the_compact_prompts_spend_fewer_tokens_for_the_same_verdicts(
    loopback: LoopbackServer,
) -> None:
    loopback.default = counting_model
    before, spent_before = run(loopback, BEFORE)
    after, spent_after = run(loopback, None)
    assert loopback.request_count == 12  # 2 calls a sample, each run, nothing re-asked
    # The same claims and verdicts, quoted from the same sentences.
    assert [s.scores for s in after.samples] == [s.scores for s in before.samples]
    assert [s.scores["faithfulness"] for s in after.samples] == [1.0, 0.5, 1.0]
    verdicts = [[(c.text, c.verdict, c.evidence) for c in s.claims] for s in after.samples]
    assert verdicts == [[(c.text, c.verdict, c.evidence) for c in s.claims] for s in before.samples]
    # The tokens the server reported, summed by VERA's ledger: fewer in and fewer out.
    assert spent_before["calls"] == spent_after["calls"] == 6
    prompt_before, prompt_after = spent_before["prompt_tokens"], spent_after["prompt_tokens"]
    out_before, out_after = spent_before["completion_tokens"], spent_after["completion_tokens"]
    assert isinstance(prompt_before, int) and isinstance(prompt_after, int)
    assert isinstance(out_before, int) and isinstance(out_after, int)
    # Measured: 2,991 -> 1,392 prompt tokens (1,404 with verify_claims/4's example row), 202 ->
    # 39 completion tokens.
    assert prompt_after < 0.55 * prompt_before
    assert out_after < 0.3 * out_before
    assert spent_after["cost_usd"] < 0.5 * spent_before["cost_usd"]  # type: ignore[operator]
