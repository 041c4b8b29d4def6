"""Verification as a pipeline step: keep what the retrieved context grounds, drop the rest.

`Verify` checks every claim of the answer against the state's contexts with a judge. A claim
is kept when its support reaches `threshold` (the judge's probability of support where it gives
one, else FULLY 1.0, PARTIALLY 0.5, NO_EVIDENCE and CONTRADICTED 0) and its verdict is not
NO_EVIDENCE or CONTRADICTED: a judge whose words decide its verdicts (the lexical `offline`
judge) may still give such a claim a high probability. With `action="drop"` the answer
keeps only the text of the kept claims (with their citation markers); with `action="flag"` the
answer is unchanged and the dropped claims are listed in `state.data["unsupported_claims"]`.
When nothing is kept, the step abstains.
"""

from __future__ import annotations

import re
from typing import Literal

from vera._analysis._analysis import analyse_claims
from vera._types import Claim, ClaimVerdict, Sample, Verdict
from vera.judges._base import Judge, JudgeWork
from vera.judges._offline._claims import extract_claims as split_claims
from vera.pipelines._core import DryStep, RagState

DEFAULT_THRESHOLD = 0.80
VERIFY_ABSTENTION = (
    "The provided documents do not contain enough information to answer this question."
)
_SUPPORT = {
    Verdict.FULLY_SUPPORTED: 1.0,
    Verdict.PARTIALLY_SUPPORTED: 0.5,
    Verdict.NO_EVIDENCE: 0.0,
    Verdict.CONTRADICTED: 0.0,
}
# Citation markers and the sentence's closing punctuation that follow a claim belong to it.
_TRAILER = re.compile(r"(?:\s*\[[^\[\]\n]{1,40}\])*[.!?]?(?:\s*\[[^\[\]\n]{1,40}\])*")


def support(verdict: ClaimVerdict) -> float:
    """How strongly a verdict supports its claim, from 0 to 1."""
    return verdict.entailment if verdict.entailment is not None else _SUPPORT[verdict.verdict]


class Verify:
    """A step that verifies the answer's claims and drops (or flags) the unsupported ones."""

    def __init__(
        self,
        judge: Judge,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        action: Literal["drop", "flag"] = "drop",
        abstain_when_empty: bool = True,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
        self.judge = judge
        self.threshold = threshold
        self.action = action
        self.abstain_when_empty = abstain_when_empty
        self.name = f"verify@{threshold:.2f}"

    def _keeps(self, verdict: ClaimVerdict) -> bool:
        return not verdict.verdict.unsupported and support(verdict) >= self.threshold

    def dry_run(self, state: RagState) -> DryStep:
        """The judge's analysis of the answer; the answer is kept whole, an upper bound for
        the work after it (what would be dropped is known only once the judge has run)."""
        response = state.response or ""
        if state.abstained or not response.strip():
            return DryStep(state)
        work = JudgeWork(
            kind="analyse",
            text=response,
            query=state.query,
            contexts=tuple(c.text for c in state.contexts),
            claims=tuple(c.text for c in split_claims(response)),
        )
        return DryStep(state, judge_work=(work,))

    async def __call__(self, state: RagState) -> RagState:
        response = state.response or ""
        if state.abstained or not response.strip():
            return state
        sample = Sample(
            id="pipeline", query=state.query, response=response, contexts=state.contexts
        )
        claims, verdicts = await analyse_claims(sample, self.judge)
        if not claims:
            return state
        kept = [c for c, v in zip(claims, verdicts, strict=True) if self._keeps(v)]
        dropped = [c.text for c in claims if c not in kept]
        data = {**state.data, "unsupported_claims": tuple(dropped)}
        if not dropped or self.action == "flag":
            return state.evolve(data=data)
        if not kept:
            if not self.abstain_when_empty:
                return state.evolve(response="", data=data)
            return state.evolve(response=VERIFY_ABSTENTION, abstained=True, data=data)
        return state.evolve(response=_keep(response, kept), data=data)


def _keep(response: str, kept: list[Claim]) -> str:
    """The text of the kept claims, in order, each with the markers and stop that follow it."""
    pieces = []
    for claim in kept:
        if claim.span is None:
            pieces.append(claim.text.strip())
            continue
        start, end = claim.span
        trailer = _TRAILER.match(response, end)
        stop = trailer.end() if trailer else end
        pieces.append(response[start:stop].strip())
    text = " ".join(p for p in pieces if p)
    return text if text.endswith((".", "!", "?", "]")) else text + "."
