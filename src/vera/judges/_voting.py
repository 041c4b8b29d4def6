"""Majority verdicts over several draws of the same judge, with the agreement rate.

Asking a judge k times and voting shows how noisy it is on each claim: an agreement of 1.0
means every draw gave the same verdict; 0.5 means the judge is guessing between two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from vera._types import ClaimVerdict, Verdict

# A tie goes to the less supported verdict: a judge unsure whether a claim is supported has
# not shown that it is.
_CAUTION = {
    Verdict.CONTRADICTED: 0,
    Verdict.NO_EVIDENCE: 1,
    Verdict.PARTIALLY_SUPPORTED: 2,
    Verdict.FULLY_SUPPORTED: 3,
}


def majority_verdicts(draws: Sequence[Sequence[ClaimVerdict]]) -> list[ClaimVerdict]:
    """One verdict per claim: the most common across draws, with `agreement` set.

    Each draw lists the same claims in the same order. The verdict kept is the first draw's
    that gave the winning verdict, so its evidence and reason agree with it. A single draw is
    returned as it is, with no agreement figure.
    """
    if not draws:
        raise ValueError("at least one draw is needed")
    if len(draws) == 1:
        return list(draws[0])
    voted: list[ClaimVerdict] = []
    for per_draw in zip(*draws, strict=True):
        if len({v.claim_id for v in per_draw}) != 1:
            raise ValueError("draws must list the same claims in the same order")
        counts = Counter(v.verdict for v in per_draw)
        top = max(counts.values())
        winner = min((v for v, n in counts.items() if n == top), key=_CAUTION.__getitem__)
        chosen = next(v for v in per_draw if v.verdict is winner)
        voted.append(chosen.model_copy(update={"agreement": top / len(per_draw)}))
    return voted
