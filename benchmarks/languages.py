"""The offline judge on the bundled multilingual example, per language (docs/languages.md).

A planted error is caught when at least one claim of its response is not FULLY_SUPPORTED; a
clean sample passes when every claim is. A sample the judge refuses counts as neither.

    .venv/bin/python benchmarks/languages.py
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

import vera
from vera import Verdict
from vera.judges import OfflineJudge


async def _flagged(judge: OfflineJudge, response: str, contexts: list[str]) -> bool:
    claims = await judge.extract_claims(response)
    verdicts = await judge.verify_claims(claims, contexts)
    return any(v.verdict is not Verdict.FULLY_SUPPORTED for v in verdicts)


async def _measure() -> dict[str, list[int]]:
    judge = OfflineJudge()
    # language -> [planted, caught, clean, passed]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for sample in vera.load_dataset("multilingual"):
        language = str(sample.metadata["language"])
        flagged = await _flagged(judge, sample.response or "", [c.text for c in sample.contexts])
        row = counts[language]
        if sample.metadata.get("planted"):
            row[0] += 1
            row[1] += flagged
        else:
            row[2] += 1
            row[3] += not flagged
    return counts


def main() -> None:
    counts = asyncio.run(_measure())
    print("| language | planted errors caught | clean samples passed |")
    print("|---|---|---|")
    for language, (planted, caught, clean, passed) in sorted(counts.items()):
        print(
            f"| {language} | {caught}/{planted} ({caught / planted:.0%}) "
            f"| {passed}/{clean} ({passed / clean:.0%}) |"
        )


if __name__ == "__main__":
    main()
