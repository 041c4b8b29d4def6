"""`CascadeJudge`: a cheap judge decides the claims it is sure of; an LLM judge gets the rest.

`vera eval --judge cascade --cascade-judge openai:gpt-4o-mini` takes claims from the offline
judge and verifies all of them offline first. A verdict whose entailment probability is at least
`high` or at most `low` stands; every other claim (uncertain, or given no probability at all) is
sent to the LLM judge, all of a sample's together in one `verify_claims` call, and a sample whose
claims were all decided offline costs no LLM call.

What the report's `judge_details` says:

- `claims`, `claims_sent`, `share_sent`: claims verified, and how many (what share) went to the
  second judge;
- `calls_saved`: LLM verification requests avoided, counted the way the second judge batches
  claims: the requests it would have made to verify every claim, minus those it made for the
  claims sent. With the LLM judge's batched mode (up to 25 claims a request) that is one request
  per sample decided wholly offline; with `per_claim`, one per claim decided offline; each
  times `--judge-samples` draws. Claim extraction never reaches the LLM in a cascade, so the
  extraction request a plain LLM judge makes per sample is saved too but not counted here,
  nor is the truths mode's per-context-set request;
- under the second judge's name, its own details (prompt versions, calls, tokens, cost), with
  its `usage` also at the top level, where the CLI and the HTML report look for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vera._types import Claim, ClaimVerdict, RelevanceVerdict
from vera._types._errors import ConfigError
from vera.judges._base import (
    BaseJudge,
    CallEstimate,
    Capability,
    Judge,
    JudgeDescription,
    JudgeWork,
    judge_capabilities,
    judge_matrix,
    match_verdicts,
    partial_rule,
    planned_calls,
    relevance_rater,
)

# The uncertain band's default bounds, on the offline verifier's probabilities (calibrated on
# RAGTruth dev): the claims it is least sure of. On RAGTruth dev the band sends 36 % of claims,
# 18 % of them hallucinated, and 5 % of those above it are. Claims between the band and the
# FULLY_SUPPORTED cut-off (0.97) keep offline:learned's PARTIALLY_SUPPORTED: a band up to 0.97
# would send 84 % of the claims to the LLM, most of the saving.
DEFAULT_LOW = 0.2
DEFAULT_HIGH = 0.9


class CascadeJudge(BaseJudge):
    """`first` extracts and verifies every claim; `second` re-verifies only the uncertain ones.

    A claim is decided by `first` when its verdict's `entailment` is not None and is at least
    `high` or at most `low`; otherwise `second` gives the verdict. Verdicts come back in claim
    order, each reason prefixed with the judge that gave it.

    Raises:
        ValueError: unless 0 ≤ low ≤ high ≤ 1.
    """

    def __init__(
        self, first: Judge, second: Judge, *, low: float = DEFAULT_LOW, high: float = DEFAULT_HIGH
    ) -> None:
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"need 0 <= low <= high <= 1, got low={low}, high={high}")
        self.first = first
        self.second = second
        # The PARTIALLY_SUPPORTED a cascade gives are its first judge's, kept between the
        # uncertain band and full support (DEFAULT_HIGH), so they count by its rule.
        self.partial_rule = partial_rule(first)
        self.low = low
        self.high = high
        self.claims = 0
        self.claims_sent = 0
        self.verifications = 0
        self.verifications_sent = 0
        self.calls_saved = 0
        # Requests the second judge makes per number of claims, counted once each: counting
        # runs the judge's code against a recording model, too much to repeat per sample.
        self._requests: dict[int, int] = {}

    @property
    def spec(self) -> str:
        return f"cascade({self.first.spec} → {self.second.spec})"

    def __repr__(self) -> str:
        return f"CascadeJudge({self.first!r}, {self.second!r}, low={self.low}, high={self.high})"

    def describe(self) -> JudgeDescription:
        """How much went to the second judge and what that saved (see the module docstring),
        with the second judge's own description under its spec."""
        second = self.second.describe()
        extra: dict[str, Any] = {
            "first": self.first.spec,
            "second": second.spec,
            "low": self.low,
            "high": self.high,
            "claims": self.claims,
            "claims_sent": self.claims_sent,
            "share_sent": self.claims_sent / self.claims if self.claims else None,
            "verifications": self.verifications,
            "verifications_sent": self.verifications_sent,
            "calls_saved": self.calls_saved,
            second.spec: second.to_details(),
        }
        return JudgeDescription(spec=self.spec, kind="cascade", usage=second.usage, extra=extra)

    def plan_calls(self, work: Sequence[JudgeWork]) -> CallEstimate:
        """Claims come from the first judge; their verification is counted as if every claim
        were sent to the second (which share is sent is known only once the first has run)."""
        sent: list[JudgeWork] = []
        for item in work:
            if item.kind in ("analyse", "verify"):
                sent.append(item.model_copy(update={"kind": "verify"}))
            elif item.kind in ("rate_relevance", "verify_matrix"):
                sent.append(item)
        return planned_calls(self.first, [w for w in work if w.kind == "extract"]) + (
            planned_calls(self.second, sent)
        )

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """The first judge's claims."""
        return await self.first.extract_claims(response, query=query)

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in claim order; at most one call to the second judge."""
        if not claims:
            return []
        first_name = self.first.spec
        decided = match_verdicts(claims, await self.first.verify_claims(claims, contexts))
        unsure = [c for c, v in zip(claims, decided, strict=True) if not self._sure(v)]
        self.claims += len(claims)
        self.verifications += 1
        self.calls_saved += self._second_requests(len(claims)) - self._second_requests(len(unsure))
        final = {v.claim_id: _credited(v, first_name) for v in decided}
        if unsure:
            self.claims_sent += len(unsure)
            self.verifications_sent += 1
            second_name = self.second.spec
            answers = match_verdicts(unsure, await self.second.verify_claims(unsure, contexts))
            final.update((v.claim_id, _credited(v, second_name)) for v in answers)
        return [final[c.id] for c in claims]

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        """The first judge's matrix; the claims with a cell it is unsure of go to the second
        judge together (one matrix call), whose verdicts replace only those cells."""
        if not claims or not contexts:
            return [[] for _ in claims]
        first, second = self.first.spec, self.second.spec
        rows = await judge_matrix(self.first, claims, contexts)
        final = [[_credited(v, first) for v in row] for row in rows]
        unsure = [i for i, row in enumerate(rows) if not all(self._sure(v) for v in row)]
        if not unsure:
            return final
        asked = [claims[i] for i in unsure]
        answers = await judge_matrix(self.second, asked, contexts)
        for i, answer in zip(unsure, answers, strict=True):
            final[i] = [
                mine if self._sure(own) else _credited(theirs, second)
                for own, mine, theirs in zip(rows[i], final[i], answer, strict=True)
            ]
        return final

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Relevance only where one of its judges rates it; the rest as every `BaseJudge`."""
        rates = {Capability.RATE_RELEVANCE} & (
            judge_capabilities(self.first) | judge_capabilities(self.second)
        )
        return frozenset({Capability.VERIFY_MATRIX, Capability.PLAN_CALLS, *rates})

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """Relevance from the second judge, else (one that cannot rate) the first; the cascade
        only splits claims."""
        try:
            return await relevance_rater(self.second).rate_relevance(query, texts)
        except ConfigError:
            return await relevance_rater(self.first).rate_relevance(query, texts)

    def _second_requests(self, claims: int) -> int:
        if claims not in self._requests:
            self._requests[claims] = _requests(self.second, claims)
        return self._requests[claims]

    def _sure(self, verdict: ClaimVerdict) -> bool:
        p = verdict.entailment
        return p is not None and (p >= self.high or p <= self.low)


def _credited(verdict: ClaimVerdict, judge: str) -> ClaimVerdict:
    """`verdict` with its reason saying which judge gave it."""
    reason = f"{judge}: {verdict.reason}" if verdict.reason else judge
    return verdict.model_copy(update={"reason": reason})


def _requests(judge: Judge, claims: int) -> int:
    """Verification requests `judge` makes for `claims` claims of one sample, by its own plan
    of calls (an LLM judge batches claims per call, once per draw)."""
    if claims == 0:
        return 0
    work = JudgeWork(kind="verify", claims=("claim",) * claims, contexts=("context",))
    return max(1, planned_calls(judge, [work]).calls)
