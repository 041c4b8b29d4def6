"""The HTML report at scale: file size and time to the first page in headless Chromium.

Builds a synthetic report of N samples, writes it with `vera.render.render_html`, opens the
file in headless Chromium (the system's `/usr/bin/chromium`, driven by Playwright over a pipe,
as `tests/browser` does) and prints the file's size and how long the page took to show its
first page of samples and answer a click.

Each synthetic sample is what an LLM-judged RAG run produces: a query, 2-4 retrieved passages
of about 500 characters drawn from a shared corpus (`--passages` of them; popular passages are
retrieved for many queries, as in a real knowledge base), a response of 3-6 claims with their
spans, verdicts, reasons and evidence quotes, five metrics with reasons, two pipeline steps,
and one sample in a hundred failed with an error. Text is made of words from a Zipf-like
vocabulary of pseudo-words, numbers and names, which gzip compresses about as well as English
prose. Samples are deterministic for `--seed`.

    .venv/bin/python benchmarks/html_scale.py --samples 5000 100000
    .venv/bin/python benchmarks/html_scale.py --samples 5000 --passages 0   # no passage shared

The time is Chromium's own clock from navigation start to the page's `vera-ready` performance
mark (set once the first page of samples is in the DOM and the controls answer), or to the load
event for a report that has no such mark (older renderers, which put every sample in the HTML).
"""

from __future__ import annotations

import argparse
import gc
import inspect
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any

import vera
from vera import ClaimRecord, Report, Sample, SampleResult, SampleStatus, Verdict
from vera._results import build_report
from vera._types import StepRecord
from vera.metrics import MetricResult, MetricStatus
from vera.render import render_html

WHITEBOX = "the report builder, on hand-made results"

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
THRESHOLDS = {
    "faithfulness": 0.7,
    "hallucination_rate": 0.2,
    "grounding_precision": 0.6,
    "context_relevance": 0.5,
    "answer_relevance": 0.5,
}
CATEGORIES = ("billing", "shipping", "returns", "accounts", "security", "pricing", "legal")
VERDICT_WEIGHTS = {
    Verdict.FULLY_SUPPORTED: 0.6,
    Verdict.PARTIALLY_SUPPORTED: 0.15,
    Verdict.NO_EVIDENCE: 0.15,
    Verdict.CONTRADICTED: 0.1,
}
_ONSETS = ("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
           "br", "ch", "st", "tr", "pl", "gr", "sh", "th")  # fmt: skip
_SYLLABLES = [c + v for c in _ONSETS for v in ("a", "e", "i", "o", "u", "ai", "ea", "ou", "y")]
_STOPWORDS = ("the", "a", "of", "for", "with", "in", "on", "by", "to", "and", "within", "after",
              "from", "is", "are", "was", "has", "its")  # fmt: skip
_NAMES = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Apollo",
          "Orion", "Vega")  # fmt: skip


class Corpus:
    """Seeded text: a pseudo-word vocabulary drawn Zipf-like, and a pool of passages."""

    def __init__(self, seed: int, passages: int) -> None:
        rng = random.Random(seed)
        words: set[str] = set()
        while len(words) < 20000:
            words.add("".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4))))
        self.words = sorted(words)
        rng.shuffle(self.words)
        self.weights = list(accumulate(1 / (rank + 1) for rank in range(len(self.words))))
        self.seed = seed
        self.pool = [self.passage(random.Random(f"{seed}:p{i}")) for i in range(passages)]

    def sentence(self, rng: random.Random) -> str:
        count = rng.randint(9, 18)
        content = rng.choices(self.words, cum_weights=self.weights, k=count)
        out = [w if rng.random() > 0.35 else f"{rng.choice(_STOPWORDS)} {w}" for w in content]
        if rng.random() < 0.5:
            out.insert(rng.randrange(len(out)), str(rng.randint(2, 9000)))
        if rng.random() < 0.3:
            out.insert(0, rng.choice(_NAMES))
        return " ".join(out).capitalize() + "."

    def passage(self, rng: random.Random, size: int = 500) -> str:
        sentences: list[str] = []
        while sum(len(s) + 1 for s in sentences) < size:
            sentences.append(self.sentence(rng))
        return " ".join(sentences)

    def contexts(self, rng: random.Random) -> list[str]:
        count = rng.randint(2, 4)
        if not self.pool:
            return [self.passage(rng) for _ in range(count)]
        # Popular passages come back often: a few are retrieved for many queries.
        picks = {int(len(self.pool) * rng.random() ** 2) for _ in range(count)}
        return [self.pool[i] for i in sorted(picks)]


def _claim(corpus: Corpus, rng: random.Random, contexts: list[str], number: int) -> ClaimRecord:
    verdict = rng.choices(list(VERDICT_WEIGHTS), weights=list(VERDICT_WEIGHTS.values()))[0]
    index = rng.randrange(len(contexts))
    sentences = [s if s.endswith(".") else s + "." for s in contexts[index].split(". ")]
    evidence = rng.choice(sentences)
    words = evidence.rstrip(".").split()
    if verdict is Verdict.NO_EVIDENCE:
        text, evidence, cited = corpus.sentence(rng), "", None
    elif verdict is Verdict.CONTRADICTED:
        words[rng.randrange(len(words))] = str(rng.randint(2, 9000))
        text, cited = " ".join(words) + ".", index
    else:
        drop = 0.1 if verdict is Verdict.FULLY_SUPPORTED else 0.4
        keep = [w for w in words if rng.random() > drop]
        text, cited = " ".join(keep or words) + ".", index
    missing = rng.sample(words, k=min(len(words), rng.randint(0, 3)))
    reason = f"context covers {len(words) - len(missing)}/{len(words)} content words"
    reason += f"; missing: {', '.join(missing)}" if missing else ""
    return ClaimRecord(
        id=f"c{number}",
        text=text,
        span=None,
        verdict=verdict,
        evidence=evidence,
        context_index=cited,
        reason=reason,
    )


def _metrics(claims: list[ClaimRecord], rng: random.Random) -> dict[str, MetricResult]:
    supported = sum(c.verdict is Verdict.FULLY_SUPPORTED for c in claims)
    partial = sum(c.verdict is Verdict.PARTIALLY_SUPPORTED for c in claims)
    n = len(claims)
    bad = n - supported - partial
    scores = {
        "faithfulness": ((supported + 0.5 * partial) / n, f"{supported} of {n} claims supported"),
        "hallucination_rate": (bad / n, f"{bad} of {n} claims unsupported or contradicted"),
        "grounding_precision": (
            (supported + partial) / n,
            f"{supported + partial} of {n} response claims grounded in the context",
        ),
        "context_relevance": (rng.choice([0.25, 0.5, 0.75, 1.0]), "chunks relevant to the query"),
        "answer_relevance": (round(rng.random(), 3), "the response addresses the query"),
    }
    results = {}
    for name, (score, reason) in scores.items():
        threshold = THRESHOLDS[name]
        passed = score <= threshold if name == "hallucination_rate" else score >= threshold
        results[name] = MetricResult(
            name=name,
            score=score,
            passed=passed,
            status=MetricStatus.OK,
            reason=reason,
            threshold=threshold,
        )
    return results


def make_sample(corpus: Corpus, index: int) -> tuple[Sample, SampleResult]:
    """Sample `index` of the synthetic dataset and its result; the same for the same seed."""
    rng = random.Random(f"{corpus.seed}:s{index}")
    contexts = corpus.contexts(rng)
    sample_id = f"q-{index:06d}"
    category = rng.choice(CATEGORIES)
    query = corpus.sentence(rng).rstrip(".") + "?"
    claims = [_claim(corpus, rng, contexts, n + 1) for n in range(rng.randint(3, 6))]
    spans, position = [], 0
    for claim in claims:
        spans.append((position, position + len(claim.text)))
        position += len(claim.text) + 1
    claims = [c.model_copy(update={"span": s}) for c, s in zip(claims, spans, strict=True)]
    response = " ".join(c.text for c in claims)
    sample = Sample(
        id=sample_id, query=query, response=response, contexts=contexts, category=category
    )
    latency = rng.lognormvariate(6.5, 0.4)
    steps = (
        StepRecord(name="retrieve", latency_ms=latency * 0.3),
        StepRecord(name="generate", latency_ms=latency * 0.7, judge_calls=2, cost_usd=0.0004),
    )
    common: dict[str, Any] = {
        "id": sample_id,
        "category": category,
        "latency_ms": latency,
        "steps": steps,
    }
    if rng.random() < 0.01:
        error = "the judge's reply could not be read: expected a JSON object, got a cut-off string"
        return sample, SampleResult(status=SampleStatus.ERROR, error=error, **common)
    results = _metrics(claims, rng)
    scores = {name: r.score for name, r in results.items()}
    result = SampleResult(
        status=SampleStatus.SCORED, scores=scores, results=results, claims=tuple(claims), **common
    )
    return sample, result


class Samples(Mapping[str, Sample]):
    """The dataset by id, for the renderer's text lookups, without holding all of it: a
    renderer that reads each sample's text right after its result finds it among the last
    few made; any other lookup makes the sample again."""

    def __init__(self, corpus: Corpus, count: int) -> None:
        self.corpus, self.count = corpus, count
        self.recent: dict[str, Sample] = {}

    def results(self) -> Iterator[SampleResult]:
        for index in range(self.count):
            sample, result = make_sample(self.corpus, index)
            self.recent[sample.id] = sample
            if len(self.recent) > 64:
                del self.recent[next(iter(self.recent))]
            yield result

    def __getitem__(self, key: str) -> Sample:
        if key in self.recent:
            return self.recent[key]
        if not key.startswith("q-") or not key[2:].isdigit() or int(key[2:]) >= self.count:
            raise KeyError(key)
        return make_sample(self.corpus, int(key[2:]))[0]

    def __iter__(self) -> Iterator[str]:
        return (f"q-{i:06d}" for i in range(self.count))

    def __len__(self) -> int:
        return self.count


def build(samples: Samples) -> Report:
    """The run's report, its aggregates over every sample (which needs them all at once)."""
    results = list(samples.results())
    return build_report(
        dataset="synthetic",
        judge="openai:gpt-4o-mini",
        version=vera.__version__,
        thresholds=THRESHOLDS,
        results=results,
        lower_is_better=["hallucination_rate"],
    )


def write(report: Report, samples: Samples, path: Path, *, memory: bool = False) -> float:
    """Render the report to `path`; the seconds it took. With `memory`, also print the most
    memory Python held at once while rendering (tracemalloc, which slows the render)."""
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    if "results" in inspect.signature(render_html).parameters:
        # Streamed: the renderer reads each result once, and the report holds none of them.
        page = render_html(
            report.model_copy(update={"samples": ()}), samples=samples, results=samples.results()
        )
    else:
        page = render_html(report, samples=samples)
    seconds = time.perf_counter() - start
    if memory:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"  peak Python memory while rendering: {peak / 1e6:.0f} MB")
    path.write_text(page, encoding="utf-8")
    return seconds


READY = """() => {
  const mark = performance.getEntriesByName("vera-ready")[0];
  if (mark) { return {ms: mark.startTime, how: "vera-ready mark"}; }
  if (document.getElementById("sample-data")) { return null; }  // still unpacking
  const nav = performance.getEntriesByType("navigation")[0];
  if (nav && nav.loadEventEnd > 0) { return {ms: nav.loadEventEnd, how: "load event"}; }
  return null;
}"""
NEXT = """() => new Promise(resolve => {
  const button = document.querySelector("#pager-next, [data-page=next]");
  if (!button) { resolve(null); return; }
  const start = performance.now();
  button.click();
  requestAnimationFrame(() => resolve(performance.now() - start));
})"""


def open_times(path: Path, runs: int) -> list[dict[str, Any]]:
    """Open the file `runs` times, each in a fresh profile, and time it."""
    from playwright.sync_api import sync_playwright

    timings = []
    with sync_playwright() as driver:
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as profile:
                context = driver.chromium.launch_persistent_context(
                    profile, executable_path=CHROMIUM, headless=True, args=FLAGS
                )
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                start = time.perf_counter()
                page.goto(path.as_uri(), timeout=300_000, wait_until="commit")
                ready = page.wait_for_function(READY, timeout=300_000, polling=20).json_value()
                wall = time.perf_counter() - start
                heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
                timings.append(
                    {**ready, "wall_s": wall, "next_ms": page.evaluate(NEXT), "heap": heap,
                     "errors": errors}
                )  # fmt: skip
                context.close()
    return timings


def measure(
    count: int, corpus: Corpus, runs: int, out: Path, *, browser: bool, memory: bool
) -> None:
    samples = Samples(corpus, count)
    start = time.perf_counter()
    report = build(samples)
    built = time.perf_counter() - start
    gc.collect()
    path = out / f"report-{count}.html"
    rendered = write(report, samples, path, memory=memory)
    del report
    size = path.stat().st_size
    print(f"{count:,} samples: {size / 1e6:.2f} MB ({size:,} bytes) -> {path}")
    print(f"  report built in {built:.1f} s, HTML rendered in {rendered:.1f} s")
    if not browser:
        return
    timings = open_times(path, runs)
    for t in timings:
        after = "" if t["next_ms"] is None else f", next page {t['next_ms']:.0f} ms"
        errors = f" errors: {'; '.join(t['errors'])}" if t["errors"] else ""
        print(
            f"  opened: {t['ms']:,.0f} ms to {t['how']} (wall {t['wall_s']:.2f} s{after}; "
            f"JS heap {t['heap'] / 1e6:.0f} MB){errors}"
        )
    median = statistics.median(t["ms"] for t in timings)
    print(f"  median of {runs}: {median:,.0f} ms to the first page")


def main() -> None:
    """Parse arguments, then build, write and open a report for each sample count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", type=int, nargs="+", default=[5000], help="sample counts")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic text")
    parser.add_argument(
        "--passages",
        type=int,
        default=None,
        help="distinct passages in the corpus (default: as many as samples; 0: none shared)",
    )
    parser.add_argument("--runs", type=int, default=3, help="openings per file; the median")
    parser.add_argument("--out", type=Path, default=None, help="folder for the HTML files")
    parser.add_argument("--no-browser", action="store_true", help="size only, no Chromium")
    parser.add_argument(
        "--memory", action="store_true", help="trace the render's peak memory (slower)"
    )
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="vera-html-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    for count in args.samples:
        corpus = Corpus(args.seed, count if args.passages is None else args.passages)
        measure(count, corpus, args.runs, out, browser=not args.no_browser, memory=args.memory)


if __name__ == "__main__":
    main()
