"""The `vera` baseline with an LLM generator over real HTTP (the OpenAI SDK against a scripted
server on 127.0.0.1 that plays the model): generate, flag, revise once, verify, drop.

The scripted model is a fake: it answers with the first prose sentence of passage [1] plus an
invented one, and when asked to revise it keeps only the first sentence.
"""

import itertools
import re

from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import section

import vera
from vera import build_baseline
from vera.judges import OfflineJudge
from vera.metrics import create_metric
from vera.providers import ManagedChatModel
from vera.providers._openai import OpenAIChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

INVENTED = "The service also guarantees a refund of 500 euros for every outage."


def _scripted_model(request: Recorded) -> Reply:
    prompt = request.json["messages"][-1]["content"]
    passage = section(prompt, "passages").split("[1] ", 1)[1].split("\n\n[2] ", 1)[0]
    prose = [line for line in passage.splitlines() if line.strip() and line[0].isalpha()]
    first = re.split(r"(?<=[.!?])\s", prose[0])[0] if prose else "Nothing."
    if "<unsupported>" in prompt:
        return ok_openai(f"{first} [1]")
    return ok_openai(f"{first} [1] {INVENTED}")


def test_vera_baseline_revises_then_drops_with_an_llm_generator(loopback: LoopbackServer) -> None:
    loopback.default = _scripted_model
    data = vera.load_dataset("technical")
    samples = [s for s in itertools.islice(data, 5)]
    generator = ManagedChatModel(OpenAIChatModel("gpt-test", base_url=loopback.openai_url))
    judge = OfflineJudge()
    metrics = [create_metric("hallucination_rate"), create_metric("citation_accuracy")]
    naive = vera.evaluate(
        samples, metrics, judge,
        pipeline=build_baseline("naive-rag", data.documents, judge, generator=generator),
    )  # fmt: skip
    calls_naive = loopback.request_count
    full = vera.evaluate(
        samples, metrics, judge,
        pipeline=build_baseline("vera", data.documents, judge, generator=generator),
    )  # fmt: skip
    assert calls_naive == 5
    assert loopback.request_count - calls_naive == 5 * 2  # generate, then one revision each
    assert naive.metrics["hallucination_rate"] > 0.3
    assert full.metrics["hallucination_rate"] == 0.0
    steps = [s.name for s in full.samples[0].steps]
    assert steps == [
        "retrieve:bm25@3",
        "generate:openai:gpt-test",
        "verify@0.80",
        "revise:openai:gpt-test",
        "verify@0.80",
    ]
    assert full.samples[0].steps[1].judge_calls == 1  # the generator's call is metered too
    prompts = [r.json["messages"][-1]["content"] for r in loopback.requests[calls_naive:]]
    assert sum(INVENTED in p for p in prompts) == 5  # each revision names the invented claim
