"""Long inputs: wall time and peak memory of one sample with a huge context or response.

Three cases, each evaluated alone through `vera.aevaluate` (the runner, the default offline
judge, faithfulness and the report) in a fresh process, so that each peak RSS is its own:

- `context`: one 10 MB context and a four-sentence answer drawn from it;
- `both`: the same 10 MB context and a 200 KB answer (copied, altered and invented sentences);
- `normal`: three passages of about 100 words and a four-sentence answer.

Text is synthetic but deterministic for a seed: sentences of stopwords and content words drawn
from a Zipf-like vocabulary (`--vocabulary` words; fewer words make every word commoner and the
context's index denser), with numbers, units and names.

    .venv/bin/python benchmarks/long_inputs.py
    .venv/bin/python benchmarks/long_inputs.py --case both --context-mb 10 --response-kb 200
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import resource
import subprocess
import sys
import time
from typing import Any

import vera

CASES = ("normal", "context", "both")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_STOPWORDS = _words("the a of for with in on by to and within after from is are was has its this")
_UNITS = _words("days weeks months hours percent users dollars tonnes")
_SYLLABLES = _words("ka lo mi ne ru sa te vo pi da re no li ma to be ri sel tan dor mun fal")


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class _Writer:
    """Sentences over one vocabulary: content words by a Zipf-like law past the stopwords."""

    def __init__(self, vocabulary: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(vocabulary, self.rng)
        # Rank r weighs 1 / (r + 150): the commonest content word is in about 1 % of sentences,
        # as in English once the stopwords are gone.
        self.cumulative = list(itertools.accumulate(1 / (r + 150) for r in range(vocabulary)))
        self.names = [w.capitalize() for w in self.rng.sample(self.words, min(200, vocabulary))]

    def _word(self) -> str:
        return self.rng.choices(self.words, cum_weights=self.cumulative)[0]

    def sentence(self) -> str:
        rng = self.rng
        words = ["The", self._word()]
        for _ in range(rng.randint(8, 16)):
            words.append(rng.choice(_STOPWORDS) if rng.random() < 0.4 else self._word())
        if rng.random() < 0.5:
            words[rng.randrange(2, len(words))] = rng.choice(self.names)
        if rng.random() < 0.5:
            words += ["within", str(rng.randint(2, 900)), rng.choice(_UNITS)]
        return " ".join(words) + "."

    def text(self, chars: int) -> tuple[str, list[str]]:
        """Paragraphs of at most `chars` characters in all (just under), and its sentences."""
        sentences: list[str] = []
        parts: list[str] = []
        size = -2
        while True:
            paragraph = [self.sentence() for _ in range(self.rng.randint(3, 8))]
            size += len(" ".join(paragraph)) + 2
            if size > chars and parts:
                return "\n\n".join(parts), sentences
            sentences += paragraph
            parts.append(" ".join(paragraph))

    def answer(self, source: list[str], chars: int) -> str:
        """At most `chars` characters of sentences copied from `source`, some with a number
        changed, and of invented ones."""
        out: list[str] = []
        size = -1
        while True:
            roll = self.rng.random()
            sentence = self.rng.choice(source) if roll < 0.7 else self.sentence()
            words = sentence.split()
            if roll < 0.3 and words[-2].isdigit():
                words[-2] = str(int(words[-2]) + 1)
                sentence = " ".join(words)
            size += len(sentence) + 1
            if size > chars:
                return " ".join(out)
            out.append(sentence)


def make_sample(
    case: str, context_mb: float, response_kb: float, vocabulary: int, seed: int
) -> vera.Sample:
    """The case's one sample, the same for the same arguments."""
    writer = _Writer(vocabulary, seed)
    if case == "normal":
        passages = [writer.text(700) for _ in range(3)]
        contexts = [text for text, _ in passages]
        source = [s for _, sentences in passages for s in sentences]
        return vera.Sample(id=case, response=writer.answer(source, 500), contexts=contexts)
    context, sentences = writer.text(int(context_mb * 1_000_000))
    chars = int(response_kb * 1_000) if case == "both" else 500
    return vera.Sample(id=case, response=writer.answer(sentences, chars), contexts=[context])


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux: the process's high-water mark, generation included.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(case: str, args: argparse.Namespace) -> dict[str, Any]:
    """Evaluate the case's sample in this process; its figures."""
    sample = make_sample(case, args.context_mb, args.response_kb, args.vocabulary, args.seed)
    generated_mb = _peak_rss_mb()
    start = time.perf_counter()
    report = asyncio.run(vera.aevaluate([sample], judge=args.judge))
    seconds = time.perf_counter() - start
    result = report.samples[0]
    return {
        "case": case,
        "context_chars": sum(len(c.text) for c in sample.contexts),
        "response_chars": len(sample.response or ""),
        "seconds": round(seconds, 3),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "rss_after_generation_mb": round(generated_mb, 1),
        "status": result.status.value,
        "claims": len(result.claims),
        "faithfulness": result.scores.get("faithfulness"),
        "error": result.error,
    }


def _run_isolated(case: str, argv: list[str], timeout: float) -> dict[str, Any]:
    command = [sys.executable, __file__, *argv, "--case", case, "--in-process"]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"case": case, "seconds": f"> {timeout:.0f} (killed)", "status": "timeout"}
    if done.returncode != 0:
        seconds = time.perf_counter() - start
        raise SystemExit(f"case {case} failed after {seconds:.1f}s:\n{done.stderr}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    """Run the cases asked for, each in a fresh process, and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--case", choices=[*CASES, "all"], default="all")
    parser.add_argument("--context-mb", type=float, default=10.0, help="the long context's size")
    parser.add_argument("--response-kb", type=float, default=200.0, help="the long answer's size")
    parser.add_argument("--vocabulary", type=int, default=20_000, help="content words to draw")
    parser.add_argument("--judge", default="offline")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=900, help="seconds before a kill")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(measure(args.case, args)))
        return
    shared = [
        f"--context-mb={args.context_mb}",
        f"--response-kb={args.response_kb}",
        f"--vocabulary={args.vocabulary}",
        f"--judge={args.judge}",
        f"--seed={args.seed}",
    ]
    for case in CASES if args.case == "all" else (args.case,):
        print(json.dumps(_run_isolated(case, shared, args.timeout)), flush=True)


if __name__ == "__main__":
    main()
