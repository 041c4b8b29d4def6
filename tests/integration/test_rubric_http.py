"""Rubric metrics end to end through the real OpenAI SDK against a scripted server on
127.0.0.1, over the bundled example.

The scripted model (`tests.support.scripted`) is a fake: a rubric's criteria become one item
per sentence, an item naming a word in single quotes is NOT_MET by a text holding that word
(quoting its sentence), "(n/a)" items are NOT_APPLICABLE, every other item is MET; claims are
the answer split at full stops.

Hand-checked on the example's two `fact_single` legal answers:
- ex-01: "Either party may terminate ... thirty (30) days' prior written notice ..." (c1) and
  "Customer must still pay Provider ..." (c2). Items 1 "Never says 'must'." and 2 "Gives no
  figure in 'days'.": c1 breaks 2, c2 breaks 1; pairs met 2 of 4: 0.5.
- ex-02: "... for a period of seven (7) years." and "... trade secret under applicable law.":
  no pair broken, 1.0.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_openai, scripted_reply

import vera
from vera.metrics import MetricStatus, Rubric

CRITERIA = "Never says 'must'. Gives no figure in 'days'."
PLAIN_TERMS = Rubric(
    name="plain_terms", criteria=CRITERIA, scope="claim", applies_to=("fact_single",)
)


def prompt_of(request: Recorded) -> str:
    return str(request.json["messages"][-1]["content"])


def run(loopback: LoopbackServer, tmp_path: Path, *metrics: Any, **options: Any) -> vera.RunResult:
    return vera.run_evaluation(
        "example",
        list(metrics),
        "openai:gpt-4o-mini",
        judge_base_url=loopback.openai_url,
        cache_path=tmp_path / "cache.sqlite",
        history=False,
        **options,
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")


def counting(seen: list[str]) -> Any:
    def serve(request: Recorded) -> Reply:
        seen.append(prompt_of(request))
        return scripted_openai(request)

    return serve


def test_claim_rubric_shows_which_claims_break_which_item_and_writes_its_checklist_once(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    seen: list[str] = []
    loopback.default = counting(seen)
    report = run(loopback, tmp_path, PLAIN_TERMS, reports={"json": tmp_path / "r.json"}).report
    written = [p for p in seen if "<criteria>" in p]
    assert len(written) == 1  # one checklist for the run, however many samples ask for it
    by_id = {s.id: s.results["plain_terms"] for s in report.samples}
    assert by_id["ex-01"].score == pytest.approx(0.5)
    assert by_id["ex-01"].details["breaking"] == {"c1": ["2"], "c2": ["1"]}
    assert by_id["ex-02"].score == 1.0
    fact_single = {s.id for s in report.samples if s.category == "fact_single"}
    for sample_id, result in by_id.items():
        if sample_id not in fact_single:
            assert result.status is MetricStatus.NOT_APPLICABLE
            assert result.reason.startswith("applies to fact_single; this sample's category")
    # One rubric call per sample it applies to, every claim-item pair in it.
    assert len([p for p in seen if "<items>" in p]) == len(fact_single)
    stored = json.loads((tmp_path / "r.json").read_text())
    row = next(s for s in stored["samples"] if s["id"] == "ex-01")
    details = row["results"]["plain_terms"]["details"]
    assert details["fingerprint"] == by_id["ex-02"].details["fingerprint"]
    assert details["items"][0]["text"] == "Never says 'must'."
    broken = [(v["claim_id"], v["item_id"], v["quote"]) for v in details["verdicts"]]
    assert (
        "c2",
        "1",
        "Customer must still pay Provider for all Services performed through "
        "the effective date of termination.",
    ) in broken


def test_a_second_run_makes_no_checklist_call_and_keeps_the_fingerprint(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    seen: list[str] = []
    loopback.default = counting(seen)
    first = run(loopback, tmp_path, PLAIN_TERMS).report
    calls = len(seen)
    second = run(loopback, tmp_path, PLAIN_TERMS).report
    assert len(seen) == calls  # the response cache answers every call, the checklist's too
    prints = {
        s.results["plain_terms"].details.get("fingerprint")
        for s in (*first.samples, *second.samples)
        if s.results["plain_terms"].status is not MetricStatus.NOT_APPLICABLE
    }
    assert len(prints) == 1 and None not in prints


def test_answer_rubric_scores_the_weighted_share_of_applicable_items(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    """ex-01 says "must": item 1 not met, item 2 met, item 3 "(n/a)" not applicable: 1/2."""
    loopback.default = scripted_openai
    rubric = Rubric(
        name="whole",
        criteria="Never says 'must'. Answers the question. Explains tax (n/a).",
        applies_to=("fact_single",),
    )
    report = run(loopback, tmp_path, rubric).report
    result = next(s for s in report.samples if s.id == "ex-01").results["whole"]
    assert result.score == 0.5
    assert result.reason == "1 of 2 applicable items met; not met: 1 (Never says 'must'.)"
    assert [v["verdict"] for v in result.details["verdicts"]] == [
        "NOT_MET",
        "MET",
        "NOT_APPLICABLE",
    ]


def test_an_incomplete_reply_is_re_asked_with_what_was_missing(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    seen: list[str] = []

    def serve(request: Recorded) -> Reply:
        messages = request.json["messages"]
        seen.append(messages[-1]["content"])
        asked = messages[1]["content"]  # a re-ask repeats the question, then says what was wrong
        if "<items>" not in asked:
            return scripted_openai(request)
        if len(messages) == 2:
            return ok_openai(json.dumps({"verdicts": [{"item": 1, "verdict": "NOT_MET"}]}))
        return ok_openai(json.dumps(scripted_reply(asked)))

    loopback.default = serve
    rubric = Rubric(
        name="whole", criteria="Never says 'must'. Answers.", applies_to=("fact_single",)
    )
    report = run(loopback, tmp_path, rubric)
    result = next(s for s in report.report.samples if s.id == "ex-01").results["whole"]
    assert result.score == 0.5  # the second, complete reply is scored
    assert any("That reply was not valid: no verdict for item 2" in p for p in seen)


def test_a_quote_found_in_no_text_shown_is_flagged(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    def serve(request: Recorded) -> Reply:
        if "<items>" in prompt_of(request):
            reply = {"verdicts": [{"item": 1, "verdict": "MET", "quote": "Words nobody wrote."}]}
            return ok_openai(json.dumps(reply))
        return scripted_openai(request)

    loopback.default = serve
    rubric = Rubric(name="whole", criteria="Answers.", applies_to=("fact_single",))
    report = run(loopback, tmp_path, rubric).report
    result = next(s for s in report.samples if s.id == "ex-01").results["whole"]
    assert result.score == 1.0  # the verdict stands; its evidence is flagged
    assert result.details["quotes_not_found"] == 1
    assert result.details["verdicts"][0]["quote_found"] is False


def test_a_reply_malformed_twice_fails_the_sample_loudly(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    rubric_calls: list[str] = []

    def serve(request: Recorded) -> Reply:
        asked = request.json["messages"][1]["content"]  # a re-ask repeats it first
        if "<items>" in asked:
            rubric_calls.append(prompt_of(request))
            return ok_openai('{"verdicts": [{"item": 1, "verdict": "PERHAPS"}]}')
        return scripted_openai(request)

    loopback.default = serve
    rubric = Rubric(name="whole", criteria="Answers.", applies_to=("fact_single",))
    result = run(loopback, tmp_path, rubric, max_errors="100%")
    errored = [s for s in result.report.samples if s.error]
    fact_single = [s for s in result.report.samples if s.category == "fact_single"]
    assert {s.id for s in errored} == {s.id for s in fact_single}
    assert all("the judge's reply was invalid twice" in (s.error or "") for s in errored)
    assert len(rubric_calls) == 2 * len(fact_single)  # asked, re-asked once, then the error


def test_the_offline_judge_makes_a_rubric_not_applicable_and_says_why() -> None:
    report = vera.evaluate(
        "example", [Rubric(name="whole", criteria="Answers.")], "offline", history=False
    )
    results = [s.results["whole"] for s in report.samples]
    assert {r.status for r in results} == {MetricStatus.NOT_APPLICABLE}
    assert "judge offline answers no rubric items: a rubric needs an LLM judge" in results[0].reason


def test_goal_completion_judges_an_agent_answer_with_evidence_from_its_tool_results(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    """agent-02's user asked to book the morning flight; the agent only searched (its one tool
    result: "BA117 departs LHR 08:25, arrives JFK 11:20.") and reported the times: item 1 (did
    what the user asked) is NOT_MET, as this test's judge says for that answer; items 2 and 3
    MET: 2 of 3. The tool results reach the judge as the answer's contexts."""
    asked: dict[str, str] = {}

    def serve(request: Recorded) -> Reply:
        prompt = prompt_of(request)
        if "<items>" in prompt and "Book me the morning flight" in prompt:
            asked["agent-02"] = prompt
            verdicts = [
                {"item": 1, "verdict": "NOT_MET", "quote": "BA117 leaves LHR at 08:25"},
                {"item": 2, "verdict": "MET", "quote": "BA117 departs LHR 08:25"},
                {"item": 3, "verdict": "MET", "quote": ""},
            ]
            return ok_openai(json.dumps({"verdicts": verdicts}))
        return scripted_openai(request)

    loopback.default = serve
    result = vera.run_evaluation(
        "agents",
        ["goal_completion"],
        "openai:gpt-4o-mini",
        judge_base_url=loopback.openai_url,
        cache_path=tmp_path / "cache.sqlite",
        history=False,
    )
    by_trace = {s.id.split("/")[0]: s.results["goal_completion"] for s in result.report.samples}
    assert by_trace["agent-02"].score == pytest.approx(2 / 3)
    assert by_trace["agent-02"].passed is False
    assert "[1] BA117 departs LHR 08:25, arrives JFK 11:20." in asked["agent-02"]
    assert all(r.score == 1.0 for trace, r in by_trace.items() if trace != "agent-02")
    assert by_trace["agent-01"].details["written_by"] == "user"  # fixed items: no call writes them


def test_a_checklist_the_judge_cannot_write_fails_each_sample_after_one_re_ask(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    written: list[str] = []

    def serve(request: Recorded) -> Reply:
        if "<criteria>" in request.json["messages"][1]["content"]:
            written.append(prompt_of(request))
            return ok_openai('{"items": []}')
        return scripted_openai(request)

    loopback.default = serve
    result = run(loopback, tmp_path, PLAIN_TERMS, max_errors="100%")
    fact_single = {s.id for s in result.report.samples if s.category == "fact_single"}
    errored = {s.id: s.error or "" for s in result.report.samples if s.error}
    assert set(errored) == fact_single
    assert all("the judge's reply was invalid twice" in e for e in errored.values())
    assert len(written) == 2  # asked, re-asked once: not again for every sample
