"""Throughput of the offline judge: claim extraction plus verification, samples per second.

Each sample is a four-sentence answer checked against three passages of about 100 words.
Samples are synthetic but deterministic for a seed, and every run draws fresh ones so the
judge's per-passage cache never hits: the figure is the cold cost of a new sample.

    taskset -c 0 .venv/bin/python benchmarks/offline_speed.py --samples 2000
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from dataclasses import dataclass

import vera
from vera.judges import OfflineJudge


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_NOUNS = _words(
    "refund policy customer order invoice contract warranty account payment shipment "
    "subscription plan license report audit budget server cluster database release feature "
    "ticket employee manager office region market product service supplier partner device"
)
_VERBS = _words(
    "covers includes requires allows prevents supports replaces extends reduces increases "
    "processes approves rejects tracks stores delivers schedules reviews"
)
_ADJECTIVES = _words(
    "annual monthly regional internal external premium basic standard secure remote "
    "automatic manual primary secondary digital physical"
)
_NAMES = _words("Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Apollo Orion")
_UNITS = _words("days weeks months hours percent users")
_FILLER = _words("the a of for with in on by to and within after")


@dataclass(frozen=True)
class Sample:
    answer: str
    contexts: list[str]


def _sentence(rng: random.Random) -> str:
    words = [
        "The",
        rng.choice(_ADJECTIVES),
        rng.choice(_NOUNS),
        "of",
        rng.choice(_NAMES),
        rng.choice(_VERBS),
        rng.choice(_FILLER),
        rng.choice(_ADJECTIVES),
        rng.choice(_NOUNS),
        "within",
        str(rng.randint(2, 90)),
        rng.choice(_UNITS),
    ]
    while len(words) < rng.randint(14, 18):
        words.insert(-3, rng.choice(_FILLER + _NOUNS + _ADJECTIVES))
    return " ".join(words) + "."


def _passage(rng: random.Random, words: int = 100) -> list[str]:
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(_sentence(rng))
    return sentences


def _sample(rng: random.Random) -> Sample:
    passages = [_passage(rng) for _ in range(3)]
    copied = rng.choice(passages[0])
    first, *rest = rng.choice(passages[1]).split()
    dropped = " ".join([first] + [w for w in rest if rng.random() > 0.2])
    numbers = rng.choice(passages[2]).split()
    numbers[-2] = str(int(numbers[-2]) + 1)
    answer = [copied, dropped.rstrip(".") + ".", " ".join(numbers), _sentence(rng)]
    return Sample(answer=" ".join(answer), contexts=[" ".join(p) for p in passages])


def make_samples(count: int, seed: int) -> list[Sample]:
    """`count` synthetic samples, the same for the same seed."""
    rng = random.Random(seed)
    return [_sample(rng) for _ in range(count)]


_CLOCK = [time.perf_counter]
"""Wall time, or with --cpu-time the process's CPU time (`time.process_time`)."""


async def _run(judge: OfflineJudge, samples: list[Sample]) -> float:
    start = _CLOCK[0]()
    for sample in samples:
        claims = await judge.extract_claims(sample.answer)
        await judge.verify_claims(claims, sample.contexts)
    return len(samples) / (_CLOCK[0]() - start)


async def _run_end_to_end(judge: OfflineJudge, samples: list[Sample]) -> float:
    # The whole public path: Sample validation, the runner, the metric and the report.
    rows = [
        vera.Sample(id=str(i), response=s.answer, contexts=s.contexts)
        for i, s in enumerate(samples)
    ]
    start = _CLOCK[0]()
    await vera.aevaluate(rows, judge=judge)
    return len(samples) / (_CLOCK[0]() - start)


async def _main(count: int, seed: int, runs: int, end_to_end: bool) -> None:
    judge = OfflineJudge()
    measure = _run_end_to_end if end_to_end else _run
    rates = []
    for run in range(runs):
        samples = make_samples(count, seed + run)
        rate = await measure(judge, samples)
        rates.append(rate)
        print(f"run {run + 1}: {rate:,.0f} samples/s")
    print(f"median of {runs}: {statistics.median(rates):,.0f} samples/s ({count} samples/run)")


def main() -> None:
    """Parse arguments and print the offline judge's throughput."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, default=2000, help="samples per run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first run's samples")
    parser.add_argument("--runs", type=int, default=3, help="runs; the median is reported")
    parser.add_argument(
        "--end-to-end",
        action="store_true",
        help="time vera.aevaluate (runner, metric, report) instead of the judge alone",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="samples per second of this process's CPU time, not of wall time: one core's "
        "throughput on a machine other jobs share",
    )
    args = parser.parse_args()
    if args.cpu_time:
        _CLOCK[0] = time.process_time
    asyncio.run(_main(args.samples, args.seed, args.runs, args.end_to_end))


if __name__ == "__main__":
    main()
