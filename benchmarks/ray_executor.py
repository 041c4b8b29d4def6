"""The Ray executor: offline-judge throughput by worker count, and one shared rate limit.

Offline: `--samples` synthetic samples (benchmarks/offline_speed.py's, written to a JSONL
file) evaluated with `executor = "ray"` and 1, then 2 workers on a local Ray; samples/s is
given over the whole pass (worker start-up included) and from the first result to the last
(the steady rate). LLM: the loopback server plays an OpenAI model that answers after
`--latency` seconds; `--llm-samples` rows are judged by 2 and 4 workers under one limit of
`--rate` requests/s, and the aggregate request rate the server saw is printed with the
samples lost (not scored).

    .venv/bin/python benchmarks/ray_executor.py --samples 6000 --llm-samples 150
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import ray

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from benchmarks.offline_speed import make_samples  # noqa: E402
from tests.support.loopback import LoopbackServer, Recorded, Reply  # noqa: E402
from tests.support.scripted import scripted_openai  # noqa: E402

import vera  # noqa: E402
from vera import SampleResult, Settings  # noqa: E402


def _write(path: Path, count: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for index, sample in enumerate(make_samples(count, seed=7)):
            row = {"id": f"s{index}", "response": sample.answer, "contexts": sample.contexts}
            out.write(json.dumps(row) + "\n")
    return path


def _offline(data: Path, count: int, workers: int) -> tuple[float, float]:
    """Samples/s over the whole pass, and from the first result to the last."""
    stamps: list[float] = []

    def heard(result: SampleResult) -> None:
        stamps.append(time.perf_counter())

    settings = Settings(executor="ray", ray_workers=workers)
    start = time.perf_counter()
    report = vera.evaluate(str(data), settings=settings, progress=heard)
    total = time.perf_counter() - start
    assert report.counts.scored == count, report.counts
    return count / total, (len(stamps) - 1) / (stamps[-1] - stamps[0])


def _llm(data: Path, count: int, workers: int, latency: float, rate: float) -> None:
    starts: list[float] = []
    lock = threading.Lock()

    def slow(request: Recorded) -> Reply:
        with lock:
            starts.append(time.monotonic())
        time.sleep(latency)
        return scripted_openai(request)

    with LoopbackServer() as server:
        server.default = slow
        settings = Settings(
            executor="ray",
            ray_workers=workers,
            judge="openai:loopback-model",
            judge_base_url=server.openai_url,
            judge_replies="compact",  # a hosted model simulated on loopback
            requests_per_minute=rate * 60,
            cache=False,
        )
        report = vera.evaluate(str(data), settings=settings)
    achieved = (len(starts) - 1) / (starts[-1] - starts[0])
    lost = count - report.counts.scored
    print(
        f"llm   {workers} workers: {len(starts)} requests at {achieved:.2f}/s "
        f"(limit {rate:g}/s, {achieved / rate:.0%}), {lost} samples lost"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=6000, help="offline samples per pass")
    parser.add_argument("--llm-samples", type=int, default=150, help="samples per LLM pass")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per LLM reply")
    parser.add_argument("--rate", type=float, default=20.0, help="requests/s limit")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
    ray.init(include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as folder:
        data = _write(Path(folder) / "offline.jsonl", args.samples)
        rates = {}
        for workers in (1, 2):
            whole, steady = _offline(data, args.samples, workers)
            rates[workers] = (whole, steady)
            print(
                f"offline {workers} worker(s): {whole:,.0f} samples/s whole pass, "
                f"{steady:,.0f} samples/s steady"
            )
        print(
            f"speed-up with 2 workers: {rates[2][0] / rates[1][0]:.2f}x whole pass, "
            f"{rates[2][1] / rates[1][1]:.2f}x steady"
        )
        llm_data = _write(Path(folder) / "llm.jsonl", args.llm_samples)
        for workers in (2, 4):
            _llm(llm_data, args.llm_samples, workers, args.latency, args.rate)
    ray.shutdown()


if __name__ == "__main__":
    main()
