"""One runner per framework: faithfulness on every sample, over HTTP to the simulated server.

Each runner uses the framework's documented public API with an OpenAI client pointed at the
server, and returns {samples, scored, lost, wall_s, mean_score, errors}. `wall_s` times the
evaluation call only: imports, client construction and file reading are outside it. A sample
is lost when it raised, or came back with a NaN, None or missing score.

The driver runs each runner in a fresh process (`python runners.py FRAMEWORK ...`), so no
framework inherits another's imports, event-loop patches or global state.

Setup for each framework (see the README for why):
- vera: `create_judge("openai:gpt-4o-mini", Settings(...))` and `vera.aevaluate`, 64 samples at
  once, VERA's default 16 calls in flight, its own retries (6 attempts, honours Retry-After);
  `--mode` picks the judge mode (batched by default; per_claim, truths, single_call), or
  "batch": the default mode through the OpenAI Batch API or Anthropic Message Batches
  (`--batch`), which the server simulates, so the batch bill is measured, not priced.
- vera-claude: the same with `anthropic:claude-haiku-4-5` over the simulated Messages API
  (Anthropic SDK), where VERA's `cache_control` breakpoints meet Anthropic's caching rules.
- ragas: the current `ragas.metrics.collections.Faithfulness` on `llm_factory(AsyncOpenAI)`,
  `ascore` per sample under a semaphore of 16 (RAGAS's default `max_workers`), sample errors
  kept per sample. The OpenAI client retries (max_retries=5, honours Retry-After).
- ragas-legacy: the deprecated `ragas.aevaluate` with `ragas.metrics.Faithfulness` and a
  LangChain `ChatOpenAI`, default `RunConfig` (16 workers, tenacity retries).
- deepeval: `FaithfulnessMetric` (default: include_reason) with `GPTModel`, through
  `deepeval.evaluate` with its default `AsyncConfig(max_concurrent=20)`, cache and printing
  off, errors ignored per test case; tenacity retries raised to 6 attempts.
- deepeval+client: the same, with one shared `httpx.AsyncClient` passed to `GPTModel`
  (`async_http_client`); by default GPTModel builds a new client, with a new TLS context and
  connection, for every call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import env  # noqa: F401  (sets the offline environment before any framework is imported)
from synth import read_jsonl

WHITEBOX = "the local-server defaults' table"

MODEL = "gpt-4o-mini"
CLAUDE = "anthropic:claude-haiku-4-5"  # vera-claude: VERA over the simulated Messages API
API_KEY = "sk-bench"
PEER_RETRIES = 5  # retries after the first attempt: VERA's 6 attempts in total


def _result(scores: list[Any], errors: list[str], wall_s: float) -> dict[str, Any]:
    good = [float(s) for s in scores if isinstance(s, int | float) and not math.isnan(s)]
    return {
        "samples": len(scores),
        "scored": len(good),
        "lost": len(scores) - len(good),
        "wall_s": wall_s,
        "mean_score": sum(good) / len(good) if good else None,
        "errors": sorted(set(errors))[:5],
    }


# VERA -------------------------------------------------------------------------------------


def run_vera(
    path: Path,
    url: str,
    concurrency: int,
    *,
    cache: Path,
    rpm: float | None = None,
    mode: str = "batched",
    provider: str = "openai",
    calls: int | None = None,
) -> dict[str, Any]:
    import vera
    from vera import Settings
    from vera.judges import create_judge
    from vera.providers._ready import LOCAL_DEFAULTS

    # "batch": the default mode through the provider's batch API (`--batch`), every sample
    # in flight at once so their requests share the batches, which the server answers.
    batch = mode == "batch"
    # The simulated server stands in for a remote provider, but it is on loopback, where VERA
    # takes it for one local model (one call at a time, long timeouts: docs/local-judges.md)
    # unless told otherwise: a remote provider's defaults are given, so they are kept.
    remote: dict[str, Any] = {key: Settings.model_fields[key].default for key in LOCAL_DEFAULTS}
    if calls is not None:
        remote["provider_concurrency"] = calls
    # The Anthropic SDK adds /v1/messages itself; the OpenAI one wants the /v1 root.
    settings = Settings(
        judge_base_url=f"{url}/v1" if provider == "openai" else url,
        # A hosted model simulated on loopback: the prompts a remote judge gets by default.
        judge_replies="compact",
        judge_mode="batched" if batch else mode,  # type: ignore[arg-type]
        cache_path=cache,
        cache=True,
        requests_per_minute=rpm,
        batch=batch,
        batch_poll=0.2,
        batch_window=0.5,
        **remote,
    )
    if batch:
        concurrency = max(concurrency, 100_000)
    judge = create_judge(f"openai:{MODEL}" if provider == "openai" else CLAUDE, settings)
    dataset = vera.load_dataset(path)
    # The three claim metrics the issue asks about share one claim analysis: 2 calls a sample.
    metrics = [
        vera.metrics.create_metric(name)
        for name in ("faithfulness", "hallucination_rate", "grounding_precision")
    ]
    # `vera.aevaluate` is imported on first use (with the run engine and the reporters):
    # outside the timer, as every runner's imports are.
    aevaluate = vera.aevaluate
    started = time.perf_counter()
    report = asyncio.run(aevaluate(dataset, metrics, judge=judge, concurrency=concurrency))
    wall = time.perf_counter() - started
    data = report.to_dict()
    scores: list[Any] = []
    errors: list[str] = []
    for sample in data["samples"]:
        score = sample["scores"].get("faithfulness") if sample["status"] == "scored" else None
        scores.append(score)
        if sample.get("error"):
            errors.append(str(sample["error"])[:300])
    out = _result(scores, errors, wall)
    out["judge_usage"] = data["judge_details"].get("usage")
    return out


# RAGAS ------------------------------------------------------------------------------------


def run_ragas(path: Path, url: str, concurrency: int) -> dict[str, Any]:
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics.collections import Faithfulness

    client = AsyncOpenAI(api_key=API_KEY, base_url=f"{url}/v1", max_retries=PEER_RETRIES)
    metric = Faithfulness(llm=llm_factory(MODEL, client=client))
    rows = read_jsonl(path)
    errors: list[str] = []

    async def score(row: dict[str, Any], slots: asyncio.Semaphore) -> Any:
        async with slots:
            try:
                result = await metric.ascore(
                    user_input=row["query"],
                    response=row["response"],
                    retrieved_contexts=row["contexts"],
                )
                return result.value
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
                return None

    async def run_all() -> list[Any]:
        slots = asyncio.Semaphore(concurrency)
        return await asyncio.gather(*(score(r, slots) for r in rows))

    started = time.perf_counter()
    scores = asyncio.run(run_all())
    return _result(scores, errors, time.perf_counter() - started)


def run_ragas_legacy(path: Path, url: str, concurrency: int) -> dict[str, Any]:
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, aevaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness
    from ragas.run_config import RunConfig

    chat = ChatOpenAI(model=MODEL, api_key=API_KEY, base_url=f"{url}/v1")  # type: ignore[arg-type]
    llm = LangchainLLMWrapper(chat)
    rows = read_jsonl(path)
    dataset = EvaluationDataset.from_list(
        [
            {
                "user_input": r["query"],
                "response": r["response"],
                "retrieved_contexts": r["contexts"],
            }
            for r in rows
        ]
    )
    run_config = RunConfig(max_workers=concurrency)
    started = time.perf_counter()
    result = asyncio.run(
        aevaluate(
            dataset, metrics=[Faithfulness(llm=llm)], run_config=run_config, show_progress=False
        )
    )
    wall = time.perf_counter() - started
    scores = [s.get("faithfulness") for s in result.scores]  # type: ignore[union-attr]
    return _result(scores, [], wall)


# DeepEval ---------------------------------------------------------------------------------


def run_deepeval(
    path: Path, url: str, concurrency: int, *, shared_client: bool = False
) -> dict[str, Any]:
    os.environ["DEEPEVAL_RETRY_MAX_ATTEMPTS"] = str(PEER_RETRIES + 1)
    from deepeval.evaluate import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import GPTModel
    from deepeval.test_case import LLMTestCase

    extra: dict[str, Any] = {}
    if shared_client:  # GPTModel builds a new AsyncOpenAI client per call unless given one
        import httpx

        extra["async_http_client"] = httpx.AsyncClient(timeout=60)
    model = GPTModel(model=MODEL, api_key=API_KEY, base_url=f"{url}/v1", **extra)
    metric = FaithfulnessMetric(model=model, async_mode=True, verbose_mode=False)
    rows = read_jsonl(path)
    cases = [
        LLMTestCase(input=r["query"], actual_output=r["response"], retrieval_context=r["contexts"])
        for r in rows
    ]
    started = time.perf_counter()
    result = evaluate(
        cases,
        [metric],  # type: ignore[arg-type]
        async_config=AsyncConfig(run_async=True, max_concurrent=concurrency),
        display_config=DisplayConfig(
            show_indicator=False,
            print_results=False,
            verbose_mode=False,
            inspect_after_run=False,
        ),
        cache_config=CacheConfig(write_cache=False, use_cache=False),
        error_config=ErrorConfig(ignore_errors=True),
    )
    wall = time.perf_counter() - started
    scores: list[Any] = []
    errors: list[str] = []
    for test in result.test_results:
        data = test.metrics_data[0] if test.metrics_data else None
        scores.append(data.score if data is not None and data.error is None else None)
        if data is not None and data.error:
            errors.append(str(data.error)[:300])
    scores += [None] * (len(cases) - len(scores))
    return _result(scores, errors, wall)


RUNNERS: dict[str, Callable[..., dict[str, Any]]] = {
    "vera": run_vera,
    "vera-claude": partial(run_vera, provider="anthropic"),
    "ragas": run_ragas,
    "ragas-legacy": run_ragas_legacy,
    "deepeval": run_deepeval,
    "deepeval+client": partial(run_deepeval, shared_client=True),
}
DEFAULT_CONCURRENCY = {
    "vera": 64,
    "vera-claude": 64,
    "ragas": 16,
    "ragas-legacy": 16,
    "deepeval": 20,
    "deepeval+client": 20,
}


def warm_openai_sdk() -> None:
    """Import what the OpenAI SDK imports lazily on first use, before the clock starts.

    `client.chat` imports `openai.resources` (~0.3 s on this machine) the first time it is
    touched. RAGAS touches it while building its LLM, outside the timed call; VERA and
    DeepEval touch it on their first request. Importing it up front for everyone keeps a
    one-time import out of the per-sample figures (`--cold` leaves it in).
    """
    import openai.resources  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework", choices=sorted(RUNNERS))
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--url", required=True, help="server root, e.g. http://127.0.0.1:8765")
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument("--cache", type=Path, help="VERA's response cache file")
    parser.add_argument("--rpm", type=float, help="VERA's requests_per_minute setting")
    parser.add_argument("--mode", default="batched", help="VERA's judge mode")
    parser.add_argument(
        "--calls",
        type=int,
        help="VERA's calls in flight (provider_concurrency; default VERA's, 16)",
    )
    parser.add_argument("--out", type=Path, help="write the result here as JSON")
    parser.add_argument("--cold", action="store_true", help="do not pre-import the OpenAI SDK")
    args = parser.parse_args()
    if not args.cold:
        warm_openai_sdk()
    concurrency = args.concurrency or DEFAULT_CONCURRENCY[args.framework]
    if args.framework.startswith("vera"):
        cache = args.cache or Path(f"/tmp/vera-bench-{os.getpid()}.sqlite")
        result = RUNNERS[args.framework](
            args.samples,
            args.url,
            concurrency,
            cache=cache,
            rpm=args.rpm,
            mode=args.mode,
            calls=args.calls,
        )
    else:
        result = RUNNERS[args.framework](args.samples, args.url, concurrency)
    result["framework"] = args.framework
    result["mode"] = args.mode if args.framework.startswith("vera") else None
    result["concurrency"] = concurrency
    result["cold"] = args.cold
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text, file=sys.stdout)


if __name__ == "__main__":
    main()
