"""RAGAS 0.4.3's and DeepEval's faithfulness on the real-model benchmark's rows and server.

Runs in the peers' own virtual environment (benchmarks/llm_judges/setup_venv.sh builds it),
never VERA's: each framework through its documented route to an OpenAI-compatible server,
one sample at a time (a CPU server answers one request at a time), with the framework's own
defaults otherwise:

- ragas: `ragas.metrics.collections.Faithfulness` on `llm_factory(MODEL, client=AsyncOpenAI)`,
  `ascore` per row.
- deepeval: `FaithfulnessMetric` (default threshold 0.5, include_reason) on `LocalModel`, the
  model DeepEval documents for a local OpenAI-compatible server, `a_measure` per row.

Every HTTP response the framework's client gets is counted by an httpx event hook on the
client it is given: calls, failed calls (HTTP 4xx/5xx), prompt and completion tokens from the
server's `usage`. A row whose scoring raised, or gave no number, is an error. The answer
verdict: faithful iff the score is 1.0 (VERA's rule: any claim unsupported flags the answer),
and, as the frameworks' default, flagged iff the score is below 0.5; both are reported.

    benchmarks/llm_judges/.venv/bin/python benchmarks/real_model/peers.py ragas \\
        --url http://127.0.0.1:8765/v1 --out benchmarks/real_model/results/ragas.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import httpx
from rows import HERE, MODEL_NAME, Row, balanced_accuracy, row_sets

for key, value in {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "RAGAS_DO_NOT_TRACK": "true",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
    "OPENAI_API_KEY": "sk-local",
}.items():
    os.environ.setdefault(key, value)

Scorer = Callable[[Row], Awaitable[float | None]]


class Meter:
    """Counts what the framework's HTTP client gets back, and logs each reply's text."""

    def __init__(self, replies: TextIO | None) -> None:
        self.replies = replies
        self.calls = 0
        self.failed = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def on_response(self, response: httpx.Response) -> None:
        if not response.request.url.path.endswith("/chat/completions"):
            return
        self.calls += 1
        await response.aread()
        if response.status_code >= 400:
            self.failed += 1
            self._log({"status": response.status_code, "body": response.text[:600]})
            return
        data = response.json()
        usage = data.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        choice = (data.get("choices") or [{}])[0].get("message") or {}
        self._log({"reply": choice.get("content"), "tool_calls": choice.get("tool_calls")})

    def client(self, timeout: float) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=timeout, event_hooks={"response": [self.on_response]})

    def _log(self, entry: dict[str, Any]) -> None:
        if self.replies is not None:
            self.replies.write(json.dumps(entry) + "\n")
            self.replies.flush()


def ragas_scorer(url: str, meter: Meter, timeout: float) -> Scorer:
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics.collections import Faithfulness

    client = AsyncOpenAI(base_url=url, api_key="sk-local", http_client=meter.client(timeout))
    metric = Faithfulness(llm=llm_factory(MODEL_NAME, client=client))

    async def score(row: Row) -> float | None:
        result = await metric.ascore(
            user_input=row["query"], response=row["response"], retrieved_contexts=row["contexts"]
        )
        return result.value  # type: ignore[no-any-return]

    return score


def deepeval_scorer(url: str, meter: Meter, timeout: float) -> Scorer:
    # The room VERA's run gets (run.py): `timeout` a call, four times that a sample; DeepEval's
    # own default (180 s a test case) would cut off a healthy sample on a CPU server.
    os.environ.setdefault("DEEPEVAL_PER_ATTEMPT_TIMEOUT_SECONDS_OVERRIDE", str(timeout))
    os.environ.setdefault("DEEPEVAL_PER_TASK_TIMEOUT_SECONDS_OVERRIDE", str(timeout * 4))
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import LocalModel
    from deepeval.test_case import LLMTestCase

    model = LocalModel(model=MODEL_NAME, base_url=url, api_key="sk-local")
    # LocalModel hands its extra keyword arguments to each client it builds, one a call: the
    # sync one it builds on construction is behind us, and a_measure builds AsyncOpenAI ones.
    model.kwargs["http_client"] = meter.client(timeout)
    metric = FaithfulnessMetric(model=model, async_mode=True, verbose_mode=False)

    async def score(row: Row) -> float | None:
        case = LLMTestCase(
            input=row["query"], actual_output=row["response"], retrieval_context=row["contexts"]
        )
        return await metric.a_measure(case, _show_indicator=False)  # type: ignore[no-any-return]

    return score


async def score_row(scorer: Scorer, row: Row) -> tuple[float | None, str | None]:
    """The row's score, or None and why: the scoring raised, or gave no number."""
    try:
        value = await scorer(row)
    except Exception as exc:  # a sample's failure, counted; the run goes on
        return None, f"{row['id']}: {type(exc).__name__}: {exc}"[:400]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, f"{row['id']}: no score ({value!r})"
    return value, None


def figures(
    framework: str, rows: list[Row], scores: list[float | None], meter: Meter, seconds: float
) -> dict[str, Any]:
    exact = [(r["label"], int(s < 1.0)) for r, s in zip(rows, scores, strict=True) if s is not None]
    half = [(r["label"], int(s < 0.5)) for r, s in zip(rows, scores, strict=True) if s is not None]
    n = len(rows)
    return {
        "framework": framework,
        "samples": n,
        "scored": len(exact),
        "errored": n - len(exact),
        "calls": meter.calls,
        "failed_calls": meter.failed,
        "calls_per_sample": round(meter.calls / n, 2),
        "prompt_tokens_per_sample": round(meter.prompt_tokens / n),
        "completion_tokens_per_sample": round(meter.completion_tokens / n),
        "seconds_per_sample": round(seconds / n, 1),
        "balanced_accuracy": balanced_accuracy(exact),
        "balanced_accuracy_below_half": balanced_accuracy(half),
        "flagged": sum(f for _, f in exact),
        "labelled_hallucinated": sum(label for label, _ in exact),
        "scores": {r["id"]: s for r, s in zip(rows, scores, strict=True)},
    }


SCORERS = {"ragas": ragas_scorer, "deepeval": deepeval_scorer}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("framework", choices=sorted(SCORERS))
    parser.add_argument("--url", required=True, help="the server's /v1 URL")
    parser.add_argument("--example", type=int, default=10, help="bundled example samples")
    parser.add_argument("--ragtruth", type=int, default=10, help="RAGTruth rows per task type")
    parser.add_argument("--sets", default="example,ragtruth", help="which row sets, in order")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a call may take")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or HERE / "results" / f"{args.framework}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    sets = row_sets(args.example, args.ragtruth)
    results: list[dict[str, Any]] = []
    with out.with_suffix(".replies.jsonl").open("w", encoding="utf-8") as replies:
        for name in args.sets.split(","):
            if name not in sets:
                continue
            meter = Meter(replies)
            scorer = SCORERS[args.framework](args.url, meter, args.timeout)
            done = len(results)
            scores: list[float | None] = []
            errors: list[str] = []
            started = time.monotonic()
            loop = asyncio.new_event_loop()
            for row in sets[name]:
                value, error = loop.run_until_complete(score_row(scorer, row))
                scores.append(value)
                errors += [error] if error else []
                rows = sets[name][: len(scores)]
                figured = figures(args.framework, rows, scores, meter, time.monotonic() - started)
                del results[done:]
                results.append({"rows": name, **figured, "errors": errors})
                out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
            loop.close()
            print(
                json.dumps({k: v for k, v in results[-1].items() if k not in ("scores", "errors")})
            )


if __name__ == "__main__":
    main()
