"""Deterministic synthetic RAG samples for the LLM-judge benchmark, written as VERA JSONL.

Each sample has a question, three passages of about 80 words and a 3-4 sentence answer. The
answer copies sentences from the passages; depending on the category, one sentence has a
changed number ("changed_number") or states an invented fact ("invented"). The simulated
server judges support by word overlap, so these categories give every framework the same
mix of supported and unsupported claims. Same seed, same file, byte for byte.

    python benchmarks/llm_judges/synth.py --samples 150 --out samples.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any


def _words(text: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(text.split(sep))


_ORGS = _words(
    "Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Apollo Orion Vertex Nimbus "
    "Helios Quantia Borealis Cobalt Meridian Sable Tessera Zephyr"
)
_NOUNS = _words(
    "refund policy, support plan, warranty, data archive, billing portal, release train, "
    "audit process, backup service, onboarding program, loyalty scheme, shipping network, "
    "security review, training course, partner program, field team, analytics suite",
    ", ",
)
_OBJECTS = _words(
    "damaged parcels, unused licences, premium accounts, regional invoices, remote devices, "
    "spare parts, legacy contracts, weekend orders, encrypted backups, trial users, "
    "enterprise tenants, overdue payments, customer tickets, field sensors, audit logs",
    ", ",
)
_VERBS = _words("covers processes reviews replaces tracks approves schedules stores audits")
_ADJECTIVES = _words("annual monthly regional internal premium standard secure automatic")
_UNITS = _words("days weeks months hours percent")
_CITIES = _words("Lisbon Oslo Denver Osaka Nairobi Lima Perth Gdansk Austin Porto")

_TEMPLATES = (
    "The {adj} {noun} at {org} {verb} {obj} within {num} {unit}.",
    "{org} introduced its {noun} in {year} after a pilot in {city}.",
    "Under the {noun}, {org} {verb} up to {num} {obj} for each customer.",
    "The {noun} team in {city} {verb} {obj} every {num} {unit}.",
    "According to {org}, the {adj} {noun} reduced complaints by {num} percent.",
    "Requests about {obj} go to the {city} office, which answers within {num} {unit}.",
    "{org} charges no fee for {obj} handled by the {adj} {noun}.",
)
CATEGORIES = ("faithful", "changed_number", "invented")
_WEIGHTS = (0.4, 0.3, 0.3)


def _fact(rng: random.Random, org: str, noun: str) -> str:
    template = rng.choice(_TEMPLATES)
    return template.format(
        adj=rng.choice(_ADJECTIVES),
        noun=noun,
        org=org,
        verb=rng.choice(_VERBS),
        obj=rng.choice(_OBJECTS),
        num=rng.randint(2, 90),
        unit=rng.choice(_UNITS),
        year=rng.randint(1998, 2024),
        city=rng.choice(_CITIES),
    )


def _passage(rng: random.Random, org: str, noun: str, words: int = 76) -> list[str]:
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(_fact(rng, org, noun))
    return sentences


def _change_number(rng: random.Random, sentence: str) -> str:
    words = sentence.split()
    spots = [i for i, w in enumerate(words) if w.rstrip(".").isdigit()]
    i = rng.choice(spots)
    old = int(words[i].rstrip("."))
    new = old + rng.choice((-1, 1)) * rng.randint(3, 40)
    new = new if new > 0 and new != old else old + 7
    words[i] = str(new) + ("." if words[i].endswith(".") else "")
    return " ".join(words)


def make_sample(rng: random.Random, index: int, words: int = 76) -> dict[str, Any]:
    """One sample with passages of about `words` words; the rng alone decides its content."""
    org = rng.choice(_ORGS)
    noun = rng.choice(_NOUNS)
    passages = [_passage(rng, org, noun, words) for _ in range(3)]
    category = rng.choices(CATEGORIES, _WEIGHTS)[0]
    n_sentences = rng.choice((3, 4))
    pool = [s for p in passages for s in p]
    answer = rng.sample(pool, n_sentences)
    if category == "changed_number":
        k = rng.choice([i for i, s in enumerate(answer) if any(c.isdigit() for c in s)] or [0])
        if any(c.isdigit() for c in answer[k]):
            answer[k] = _change_number(rng, answer[k])
        else:  # no sentence with a number was drawn: invent one instead
            category = "invented"
    if category == "invented":
        other_org = rng.choice([o for o in _ORGS if o != org])
        answer[rng.randrange(n_sentences)] = _fact(rng, other_org, rng.choice(_NOUNS))
    return {
        "id": f"s{index:04d}",
        "query": f"What should customers know about the {noun} at {org}?",
        "response": " ".join(answer),
        "contexts": [" ".join(p) for p in passages],
        "category": category,
    }


def generate(n: int, seed: int = 0, words: int = 76) -> list[dict[str, Any]]:
    """`n` samples, identical for the same `n`, `seed` and `words` (per passage)."""
    rng = random.Random(seed)
    return [make_sample(rng, i, words) for i in range(n)]


def write_jsonl(samples: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for sample in samples:
            f.write(json.dumps(sample, ensure_ascii=False) + "\n")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("samples.jsonl"))
    args = parser.parse_args()
    samples = generate(args.samples, args.seed)
    write_jsonl(samples, args.out)
    counts = {c: sum(s["category"] == c for s in samples) for c in CATEGORIES}
    print(f"wrote {len(samples)} samples to {args.out}: {counts}")


if __name__ == "__main__":
    main()
