"""How much a rubric's scores vary from run to run: the same rubric over the bundled example,
`--runs` times at each `--temperatures`, the response cache off so every run asks again.

By default the judge is the scripted OpenAI model of the tests on a loopback server
(`tests.support.scripted`), which answers each prompt the same way whatever the temperature:
there the figures measure the plumbing (the same verdicts give the same scores, as the score
is VERA's formula over the verdicts, never a number the model chose) and the fingerprint of a
checklist written again. `--url` points at a real OpenAI-compatible server (the small model of
benchmarks/real_model), where the verdicts themselves may change with the temperature.

Printed per temperature: each run's mean score, the largest spread of one sample's score over
the runs, the share of (sample, claim, item) verdicts identical in every run, the checklist
fingerprints seen, and the calls made.

    python benchmarks/rubric_variance.py
    python benchmarks/rubric_variance.py --url http://127.0.0.1:8765/v1 \
        --model qwen2.5-coder-1.5b-instruct-q4_k_m --limit 2 --scope answer
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.scripted import scripted_openai  # noqa: E402

import vera  # noqa: E402
from vera import Sample, load_dataset  # noqa: E402
from vera.metrics import MetricStatus, Rubric  # noqa: E402

CRITERIA = (
    "States no figure the contexts do not give. Gives no legal advice of its own. "
    "Never says 'must'."
)


def _samples(limit: int) -> list[Sample]:
    rows = list(load_dataset("example").read())
    return rows[:limit] if limit else rows


def _one_run(
    samples: list[Sample], rubric: Rubric, url: str, model: str, temperature: float
) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate(
            samples,
            [rubric],
            f"openai:{model}",
            judge_base_url=url,
            judge_temperature=temperature,
            cache=False,
            history=False,
            concurrency=1,
            max_errors="100%",
        )
    scores: dict[str, float] = {}
    verdicts: dict[tuple[str, str, str], str] = {}
    prints: set[str] = set()
    for sample in report.samples:
        result = sample.results.get(rubric.name)
        if result is None or result.status is MetricStatus.NOT_APPLICABLE:
            continue
        if result.score is not None:
            scores[sample.id] = result.score
        prints.add(str(result.details.get("fingerprint")))
        for row in result.details.get("verdicts", []):
            key = (sample.id, str(row.get("claim_id", "")), str(row["item_id"]))
            verdicts[key] = str(row["verdict"])
    errors = sum(1 for s in report.samples if s.error)
    return {"scores": scores, "verdicts": verdicts, "prints": prints, "errors": errors}


def _summary(runs: list[dict[str, Any]]) -> str:
    means = [
        sum(r["scores"].values()) / len(r["scores"]) if r["scores"] else float("nan") for r in runs
    ]
    ids = set().union(*(r["scores"] for r in runs))
    spread = max(
        (
            max(r["scores"].get(i, 0.0) for r in runs) - min(r["scores"].get(i, 0.0) for r in runs)
            for i in ids
        ),
        default=0.0,
    )
    keys = set().union(*(r["verdicts"] for r in runs))
    same = sum(1 for k in keys if len({r["verdicts"].get(k) for r in runs}) == 1)
    prints = set().union(*(r["prints"] for r in runs))
    return (
        f"means {' '.join(f'{m:.3f}' for m in means)} · largest spread of a sample "
        f"{spread:.3f} · verdicts identical in every run {same}/{len(keys)} · "
        f"fingerprints {len(prints)} · errors {[r['errors'] for r in runs]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.7])
    parser.add_argument("--url", help="a real OpenAI-compatible server (default: scripted)")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--limit", type=int, default=0, help="first N samples (0: all)")
    parser.add_argument("--scope", choices=("answer", "claim"), default="claim")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")
    rubric = Rubric(name="house_rules", criteria=CRITERIA, scope=args.scope)
    samples = _samples(args.limit)
    server = None
    url = args.url
    if url is None:
        server = LoopbackServer().start()
        server.default = scripted_openai
        url = server.openai_url
    try:
        for temperature in args.temperatures:
            started, before = time.perf_counter(), server.request_count if server else 0
            runs = [
                _one_run(samples, rubric, url, args.model, temperature) for _ in range(args.runs)
            ]
            calls = (server.request_count - before) if server else "n/a"
            seconds = time.perf_counter() - started
            print(
                f"temperature {temperature}: {len(samples)} samples x {args.runs} runs, "
                f"scope {args.scope}: {_summary(runs)} · calls {calls} · {seconds:.1f} s"
            )
    finally:
        if server is not None:
            server.stop()
    if args.url is None:
        print(
            "The scripted judge answers alike at every temperature: this measures the plumbing "
            "(identical verdicts give identical scores), not a model's variance."
        )


if __name__ == "__main__":
    main()
