"""`FakeJudge`: a scripted judge for tests. It verifies nothing.

It returns the claims and verdicts it was given for each response, and the relevance it was
given for each text, and counts its calls, so tests of metrics and the runner can state
exactly what the judge said. Its claim-by-chunk matrix gives each claim its scripted verdict
against every context: it knows nothing of what a context says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vera._types import Claim, ClaimVerdict, Relevance, RelevanceVerdict, Verdict
from vera.judges._base import BaseJudge

Script = Mapping[str, Sequence[tuple[str, Verdict | str]]]


class FakeJudge(BaseJudge):
    """A fake judge: `script` maps a response to its (claim text, verdict) pairs; `relevance`
    maps a text to its relevance label.

    A response or text missing from its script raises KeyError, so a test never scores
    something it did not script.
    """

    name = "fake"

    def __init__(
        self, script: Script, *, relevance: Mapping[str, Relevance | str] | None = None
    ) -> None:
        self.script = {response: list(pairs) for response, pairs in script.items()}
        self.relevance = dict(relevance or {})
        self.extract_calls = 0
        self.verify_calls = 0
        self.relevance_calls = 0
        self.matrix_calls = 0

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        self.extract_calls += 1
        claims = []
        for index, (text, _) in enumerate(self.script[response], start=1):
            start = response.find(text)
            span = (start, start + len(text)) if start >= 0 else None
            claims.append(Claim(f"c{index}", text, span))
        return claims

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        self.verify_calls += 1
        verdicts_by_text = {
            text: verdict for pairs in self.script.values() for text, verdict in pairs
        }
        return [
            ClaimVerdict(claim.id, verdicts_by_text[claim.text], reason="scripted by FakeJudge")
            for claim in claims
        ]

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        self.matrix_calls += 1
        verdicts_by_text = {
            text: verdict for pairs in self.script.values() for text, verdict in pairs
        }
        return [
            [
                ClaimVerdict(claim.id, verdicts_by_text[claim.text], "", k, "scripted by FakeJudge")
                for k in range(len(contexts))
            ]
            for claim in claims
        ]

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        self.relevance_calls += 1
        return [
            RelevanceVerdict(relevance=self.relevance[text], reason="scripted by FakeJudge")
            for text in texts
        ]
