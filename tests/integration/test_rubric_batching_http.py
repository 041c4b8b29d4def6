"""A claim-scope rubric's items asked in the faithfulness verification call (issue 42), end to
end through the real OpenAI SDK against a scripted server on 127.0.0.1, over the bundled
example.

The scripted model (`tests.support.scripted`) is a fake: it answers the verification and the
rubric alike whether they come in one call or two, so a batched run and an unbatched one on
the same fake replies must give the same verdicts and scores, with fewer calls. The rubric
applies to the example's `fact_single` samples; the others are verified alone in both runs.
"""

import json
from collections import Counter
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_openai, scripted_reply

import vera
from vera.metrics import Rubric

PLAIN_TERMS = Rubric(
    name="plain_terms",
    criteria="Never says 'must'. Gives no figure in 'days'.",
    scope="claim",
    applies_to=("fact_single",),
)
JOINT = 'under "rubric"'  # the rider's words, in a verification call that asks rubric items


def kind(request: Recorded) -> str:
    """What one request asks, by the tags its prompt (the first, before any re-ask) holds."""
    prompt = str(request.json["messages"][1]["content"])
    if "<items>" in prompt:
        return "joint" if JOINT in prompt else "rubric"
    if "<criteria>" in prompt:
        return "checklist"
    if "<claims>" in prompt:
        return "verify"
    return "other"


def run(loopback: LoopbackServer, *metrics: Any, **options: Any) -> vera.RunResult:
    loopback.requests.clear()
    return vera.run_evaluation(
        "example",
        list(metrics),
        "openai:gpt-4o-mini",
        judge_base_url=loopback.openai_url,
        judge_replies="compact",  # a hosted model on loopback: rubrics ride compact calls
        cache=False,
        history=False,
        **options,
    )


def outcome(result: vera.RunResult, *rubrics: str) -> dict[str, Any]:
    """Each sample's claims with their verdicts and evidence, and each rubric's score and
    verdicts with their quotes."""
    return {
        s.id: (
            [(c.text, c.verdict, c.evidence, c.reason) for c in s.claims],
            s.results["faithfulness"].score,
            [(s.results[r].score, s.results[r].details.get("verdicts")) for r in rubrics],
        )
        for s in result.report.samples
    }


def prompt_chars(loopback: LoopbackServer) -> int:
    return sum(len(m["content"]) for r in loopback.requests for m in r.json["messages"])


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


@pytest.fixture
def fact_single() -> int:
    return sum(1 for s in vera.load_dataset("example").read() if s.category == "fact_single")


def test_the_rubric_rides_on_the_verification_call_with_the_same_verdicts_and_scores(
    loopback: LoopbackServer, fact_single: int
) -> None:
    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, judge_batch_rubrics=False)
    alone_calls, alone_chars = Counter(kind(r) for r in loopback.requests), prompt_chars(loopback)
    batched = run(loopback, "faithfulness", PLAIN_TERMS)
    calls, chars = Counter(kind(r) for r in loopback.requests), prompt_chars(loopback)
    assert alone_calls["rubric"] == fact_single and alone_calls["joint"] == 0
    assert calls["joint"] == fact_single and calls["rubric"] == 0
    assert calls["verify"] == alone_calls["verify"] - fact_single
    assert sum(calls.values()) == sum(alone_calls.values()) - fact_single
    assert chars < alone_chars  # the contexts and claims are sent once, not twice
    assert outcome(batched, "plain_terms") == outcome(alone, "plain_terms")
    ex01 = next(s for s in batched.report.samples if s.id == "ex-01").results["plain_terms"]
    assert ex01.score == pytest.approx(0.5)  # hand-checked in test_rubric_http.py
    assert ex01.details["breaking"] == {"c1": ["2"], "c2": ["1"]}
    versions = batched.report.judge_details["prompt_versions"]
    assert versions["rubric_rider"] == "rubric_rider/1"


def test_two_claim_rubrics_ride_together_and_each_scores_as_alone(
    loopback: LoopbackServer, fact_single: int
) -> None:
    other = Rubric(
        name="no_pay",
        criteria="Never mentions 'pay'. Says nothing of tax (n/a).",
        scope="claim",
        applies_to=("fact_single",),
    )
    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, other, judge_batch_rubrics=False)
    batched = run(loopback, "faithfulness", PLAIN_TERMS, other)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == fact_single and calls["rubric"] == 0
    assert outcome(batched, "plain_terms", "no_pay") == outcome(alone, "plain_terms", "no_pay")
    ex01 = next(s for s in batched.report.samples if s.id == "ex-01").results["no_pay"]
    # c2 "Customer must still pay Provider ..." breaks item 1; item 2 applies to no claim.
    assert ex01.details["breaking"] == {"c2": ["1"]}
    assert ex01.score == pytest.approx(0.5)


WHOLE = Rubric(
    name="whole",
    criteria="Never says 'must'. Answers the question. Explains tax (n/a).",
    applies_to=("fact_single",),
)


def test_an_answer_rubric_rides_beside_a_claim_rubric_each_scored_as_alone(
    loopback: LoopbackServer, fact_single: int
) -> None:
    """The answer-scope items are marked "(whole answer)" and answered once, as claim 0.
    ex-01 says "must": item 1 not met, item 2 met, item 3 not applicable: 1 of 2."""
    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, WHOLE, judge_batch_rubrics=False)
    batched = run(loopback, "faithfulness", PLAIN_TERMS, WHOLE)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == fact_single and calls["rubric"] == 0
    joint = next(
        str(r.json["messages"][1]["content"]) for r in loopback.requests if kind(r) == "joint"
    )
    assert "3. (whole answer) Never says 'must'." in joint
    assert "1. (each claim) Never says 'must'." in joint
    assert outcome(batched, "plain_terms", "whole") == outcome(alone, "plain_terms", "whole")
    ex01 = next(s for s in batched.report.samples if s.id == "ex-01").results["whole"]
    assert ex01.score == 0.5
    assert [v["verdict"] for v in ex01.details["verdicts"]] == ["NOT_MET", "MET", "NOT_APPLICABLE"]


def test_an_answer_item_judged_claim_by_claim_has_that_rubric_asked_alone(
    loopback: LoopbackServer, fact_single: int
) -> None:
    """One verdict per whole-answer item, as alone: a reply that judges the answer's items
    for each claim instead answers them twice, and the rubric is asked alone."""

    def serve(request: Recorded) -> Reply:
        if kind(request) == "joint":
            reply = scripted_reply(request.json["messages"][-1]["content"])
            reply["rubric"] = [{**row, "claim": c} for row in reply["rubric"] for c in (1, 2)]
            return ok_openai(json.dumps(reply))
        return scripted_openai(request)

    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", WHOLE, judge_batch_rubrics=False)
    loopback.default = serve
    batched = run(loopback, "faithfulness", WHOLE)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == fact_single
    assert calls["rubric"] == fact_single
    assert calls["verify"] == len(batched.report.samples) - fact_single
    assert outcome(batched, "whole") == outcome(alone, "whole")


def test_one_rubric_s_unreadable_rows_cost_that_rubric_only(
    loopback: LoopbackServer, fact_single: int
) -> None:
    """Two rubrics ride together, items 1-2 and 3-4 of the call; the reply leaves out item 4
    for every claim: the second rubric is asked alone, the first is read from the reply."""
    other = Rubric(
        name="no_pay",
        criteria="Never mentions 'pay'. Says nothing of tax (n/a).",
        scope="claim",
        applies_to=("fact_single",),
    )

    def serve(request: Recorded) -> Reply:
        if kind(request) == "joint":
            reply = scripted_reply(request.json["messages"][-1]["content"])
            reply["rubric"] = [row for row in reply["rubric"] if row["item"] != 4]
            return ok_openai(json.dumps(reply))
        return scripted_openai(request)

    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, other, judge_batch_rubrics=False)
    loopback.default = serve
    batched = run(loopback, "faithfulness", PLAIN_TERMS, other)
    asked_alone = [
        str(r.json["messages"][1]["content"]) for r in loopback.requests if kind(r) == "rubric"
    ]
    assert len(asked_alone) == fact_single
    assert all("Never mentions 'pay'." in p and "'must'" not in p for p in asked_alone)
    assert outcome(batched, "plain_terms", "no_pay") == outcome(alone, "plain_terms", "no_pay")


def test_an_unreadable_rubric_part_is_asked_alone_and_the_verdicts_are_kept(
    loopback: LoopbackServer, fact_single: int
) -> None:
    def serve(request: Recorded) -> Reply:
        if kind(request) == "joint":
            reply = scripted_reply(request.json["messages"][-1]["content"])
            reply["rubric"] = reply["rubric"][:1]  # one pair answered of four or more
            return ok_openai(json.dumps(reply))
        return scripted_openai(request)

    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, judge_batch_rubrics=False)
    loopback.default = serve
    batched = run(loopback, "faithfulness", PLAIN_TERMS)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == fact_single  # not asked again together
    assert calls["rubric"] == fact_single  # the rubric, alone, as without batching
    assert calls["verify"] == len(batched.report.samples) - fact_single  # the verdicts kept
    assert outcome(batched, "plain_terms") == outcome(alone, "plain_terms")


def test_an_unreadable_verification_part_is_asked_alone_and_the_rubric_is_kept(
    loopback: LoopbackServer, fact_single: int
) -> None:
    def serve(request: Recorded) -> Reply:
        if kind(request) == "joint":
            reply = scripted_reply(request.json["messages"][-1]["content"])
            reply["verdicts"] = [{"claim": 1, "verdict": "PERHAPS"}]
            return ok_openai(json.dumps(reply))
        return scripted_openai(request)

    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, judge_batch_rubrics=False)
    loopback.default = serve
    batched = run(loopback, "faithfulness", PLAIN_TERMS)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == fact_single
    assert calls["rubric"] == 0  # the rubric's part was read
    assert calls["verify"] == len(batched.report.samples)  # every verification alone
    assert outcome(batched, "plain_terms") == outcome(alone, "plain_terms")


def test_a_joint_reply_malformed_twice_has_both_parts_asked_alone(
    loopback: LoopbackServer, fact_single: int
) -> None:
    def serve(request: Recorded) -> Reply:
        if kind(request) == "joint":
            return ok_openai("I cannot answer that in JSON.")
        return scripted_openai(request)

    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, judge_batch_rubrics=False)
    loopback.default = serve
    batched = run(loopback, "faithfulness", PLAIN_TERMS)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == 2 * fact_single  # asked, re-asked once with what was wrong
    assert calls["rubric"] == fact_single
    assert calls["verify"] == len(batched.report.samples)
    assert not any(s.error for s in batched.report.samples)
    assert outcome(batched, "plain_terms") == outcome(alone, "plain_terms")


def test_a_joint_reply_cut_off_at_max_tokens_has_both_parts_asked_alone(
    loopback: LoopbackServer, fact_single: int
) -> None:
    def serve(request: Recorded) -> Reply:
        if kind(request) == "joint":
            return ok_openai(
                '{"v": [[1, 2, "yes"]], "rubric": [{"claim": 1', finish_reason="length"
            )
        return scripted_openai(request)

    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", PLAIN_TERMS, judge_batch_rubrics=False)
    loopback.default = serve
    batched = run(loopback, "faithfulness", PLAIN_TERMS)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == fact_single  # a cut-off reply is not asked again as it was
    assert calls["rubric"] == fact_single
    assert calls["verify"] == len(batched.report.samples)
    assert outcome(batched, "plain_terms") == outcome(alone, "plain_terms")


def test_long_contexts_ride_on_the_quoted_verification_prompt_too(
    loopback: LoopbackServer,
) -> None:
    """Contexts of many short sentences with few claims are verified with quotes instead of
    sentence numbers (verify_claims_quoted); the rubric rides on that prompt as well. The
    second claim says "must": it breaks the item, the first meets it: 1 of 2 pairs met."""
    context = " ".join(f"Clause {n} sets a fee of {n} euros." for n in range(1, 60))
    sample = vera.Sample(
        id="long",
        query="What fee does clause 7 set?",
        response="Clause 7 sets a fee of 7 euros. The customer must pay it.",
        contexts=[context],
    )
    rubric = Rubric(name="plain", criteria="Never says 'must'.", scope="claim")

    def evaluate(**options: Any) -> Any:
        loopback.requests.clear()
        return vera.evaluate(
            [sample],
            ["faithfulness", rubric],
            "openai:gpt-4o-mini",
            judge_base_url=loopback.openai_url,
            judge_replies="compact",
            cache=False,
            history=False,
            **options,
        )

    loopback.default = scripted_openai
    alone = evaluate(judge_batch_rubrics=False)
    batched = evaluate()
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == 1 and calls["rubric"] == 0 and calls["verify"] == 0
    assert "verify_claims_quoted" in batched.judge_details["prompt_versions"]
    [result] = [s.results["plain"] for s in batched.samples]
    assert result.score == pytest.approx(0.5)
    assert result.details["breaking"] == {"c2": ["1"]}
    claims = [(c.verdict, c.evidence) for s in batched.samples for c in s.claims]
    assert claims == [(c.verdict, c.evidence) for s in alone.samples for c in s.claims]
    assert claims[0][1] and claims[0][1] in context  # a quote copied from the context


@pytest.mark.parametrize(
    ("options", "rubric"),
    [
        ({"judge_mode": "per_claim"}, PLAIN_TERMS),
        ({"judge_samples": 2, "judge_temperature": 0.5}, PLAIN_TERMS),
        ({}, PLAIN_TERMS.model_copy(update={"reference": True})),
    ],
    ids=["per_claim", "two_draws", "reference"],
)
def test_where_batching_does_not_apply_the_calls_are_those_without_it(
    loopback: LoopbackServer, options: dict[str, Any], rubric: Rubric
) -> None:
    loopback.default = scripted_openai
    alone = run(loopback, "faithfulness", rubric, judge_batch_rubrics=False, **options)
    alone_calls = Counter(kind(r) for r in loopback.requests)
    batched = run(loopback, "faithfulness", rubric, **options)
    calls = Counter(kind(r) for r in loopback.requests)
    assert calls["joint"] == 0
    assert calls == alone_calls
    assert outcome(batched, rubric.name) == outcome(alone, rubric.name)


@pytest.mark.parametrize(
    "rubrics",
    [
        (PLAIN_TERMS,),
        (PLAIN_TERMS, PLAIN_TERMS.model_copy(update={"name": "w", "scope": "answer"})),
    ],
    ids=["claim", "claim_and_answer"],
)
def test_the_dry_run_counts_the_calls_and_prompt_tokens_batching_saves(
    loopback: LoopbackServer, rubrics: tuple[Rubric, ...]
) -> None:
    metrics = ["faithfulness", *rubrics]

    def estimate(**options: Any) -> vera.RunEstimate:
        plan, bindings = vera.plan_evaluation(
            "example",
            metrics,
            "openai:gpt-4o-mini",
            judge_base_url=loopback.openai_url,
            judge_replies="compact",
            history=False,
            **options,
        )
        return vera.estimate_plan(plan, bindings)

    alone = estimate(judge_batch_rubrics=False)
    batched = estimate()
    loopback.default = scripted_openai
    run(loopback, *metrics, judge_batch_rubrics=False)
    made_alone = len(loopback.requests)
    run(loopback, *metrics)
    made = len(loopback.requests)
    assert made < made_alone
    # The dry run saves what the run saves: one call per sample the claim rubric rode on.
    assert alone.calls - batched.calls == made_alone - made
    assert batched.prompt_tokens < alone.prompt_tokens
