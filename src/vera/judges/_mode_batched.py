"""The `batched` mode, and the two steps the other modes build on: one call extracts the
numbered claims, one call verifies all of them against the numbered contexts (2 calls per
sample; more where the claims exceed `max_claims_per_call` or a reply was cut off).

Verdicts must come back for exactly the claim numbers asked; missing ones are re-asked alone,
and a claim still without one is NO_EVIDENCE, flagged, where the others were answered. A reply
cut off at max_tokens makes the judge split the work into smaller calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

from vera._text._segment import split_units
from vera._types import Claim, ClaimVerdict, Verdict
from vera._types._errors import JudgeResponseError
from vera.judges._asking import (
    RAISE_MAX_TOKENS,
    evidence,
    located_claim,
    numbered_texts,
    reply_validator,
)
from vera.judges._evidence import checked_verdict
from vera.judges._modes import JointTurns, Mode, ModeStrategy
from vera.judges._prompts import Prompt
from vera.judges._replies import (
    COMPACT_VERIFICATION_SCHEMA,
    EXTRACTION_SCHEMA,
    QUOTED_VERIFICATION_SCHEMA,
    VERIFICATION_SCHEMA,
    Extraction,
    Verification,
    claim_texts,
)
from vera.judges._sentence_ids import AnswerSentences, SentenceIds
from vera.judges._voting import majority_verdicts
from vera.providers._base import TruncatedOutputError

# Loaded in every mode, used instead of verify_claims where quotes cost less than sentence ids.
QUOTED_PROMPT = "verify_claims_quoted"


class BatchedMode(ModeStrategy):
    """Claims from one call, verdicts from one call per `max_claims_per_call` claims."""

    mode: ClassVar[Mode] = "batched"
    prompt_names: ClassVar[tuple[str, ...]] = ("extract_claims", "verify_claims", "rate_relevance")
    joint_turns: ClassVar[JointTurns | None] = "verify"

    async def _first_draw(
        self, response: str, contexts: Sequence[str], query: str | None
    ) -> tuple[list[Claim], list[ClaimVerdict]] | None:
        """The claims and a first draw of verdicts from one call, where the mode asks so; None:
        the claims are extracted, then verified."""
        return None

    async def _shown(self, contexts: Sequence[str]) -> list[str]:
        """What the verification shows of `contexts`: the contexts themselves."""
        return list(contexts)

    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """Claims of `response` and their verdicts against `contexts`, the way `mode` says."""
        if not response.strip():
            return [], []
        draws: list[list[ClaimVerdict]] = []
        claims: list[Claim] | None = None
        judged = await self._first_draw(response, contexts, query)
        if judged is not None:
            claims, first_draw = judged
            draws.append(first_draw)
        if claims is None:
            claims = await self.extract_claims(response, query=query)
        if not claims:
            return [], []
        draws += await asyncio.gather(
            *(self._verify_draw(claims, contexts, draw) for draw in range(len(draws), self.samples))
        )
        return claims, majority_verdicts(draws)

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Numbered atomic claims, each located in the response where it appears verbatim."""
        if not response.strip():
            return []
        texts = await self._extract_texts(response, query or "")
        return [located_claim(f"c{n}", text, response) for n, text in enumerate(texts, start=1)]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim (the majority over `samples` draws)."""
        draws = await asyncio.gather(
            *(self._verify_draw(claims, contexts, draw) for draw in range(self.samples))
        )
        return majority_verdicts(draws)

    async def _extract_texts(self, response: str, query: str) -> list[str]:
        prompt = self.prompts["extract_claims"]
        # Numbered, so a sentence that is one claim as it stands comes back as its number.
        answer = AnswerSentences.of(response)
        messages = prompt.render(
            query=query or "(none)", response=response, sentences=answer.render()
        )
        try:
            extraction = await self._ask_for_claims(
                messages,
                prompt,
                EXTRACTION_SCHEMA,
                reply_validator(Extraction, response=response, answer=answer),
                response,
            )
        except TruncatedOutputError:
            halves = _split_in_two(response)
            if halves is None:
                raise JudgeResponseError(
                    "the claim list was cut off at max_tokens even for one sentence; "
                    f"{RAISE_MAX_TOKENS}"
                ) from None
            first, second = halves
            return [
                *await self._extract_texts(first, query),
                *await self._extract_texts(second, query),
            ]
        ordered = sorted(extraction.claims, key=lambda c: c.number)
        return claim_texts([c.text for c in ordered])

    async def _verify_draw(
        self,
        claims: Sequence[Claim],
        contexts: Sequence[str],
        draw: int,
        *,
        answered: dict[str, ClaimVerdict] | None = None,
    ) -> list[ClaimVerdict]:
        """One full verification of `claims`: every claim gets a verdict, or this raises. A
        claim the judge gave no verdict for, even when asked again alone, costs that claim
        (NO_EVIDENCE, flagged) where the judge answered some of the others; with no verdict
        at all, the sample is an error: nothing was measured. `answered`: the verdicts a
        readable reply already gave (a call that asked rubric items too,
        `vera.judges._rubric_batch`), which then stands for the first call."""
        if not contexts:
            return [
                ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason="no context was given")
                for c in claims
            ]
        shown = await self._shown(contexts)
        found: dict[str, ClaimVerdict] = dict(answered or {})
        if answered is None:
            await self._verify_batches(list(claims), shown, contexts, found, draw)
        missing = [c for c in claims if c.id not in found]
        if missing:
            # Asking again for just the missing claims keeps the verdicts already given; at
            # the re-ask temperature, as the request may be the first one again.
            await self._verify_batches(missing, shown, contexts, found, draw, reask=True)
        still_missing = [c.id for c in claims if c.id not in found]
        if still_missing and not found:
            raise JudgeResponseError(f"the judge gave no verdict for claims {still_missing}")
        unanswered = "[the judge gave no verdict, even when asked again]"
        return [
            found.get(c.id) or ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason=unanswered)
            for c in claims
        ]

    async def _verify_batches(
        self,
        claims: list[Claim],
        shown: Sequence[str],
        contexts: Sequence[str],
        found: dict[str, ClaimVerdict],
        draw: int,
        *,
        reask: bool = False,
    ) -> None:
        size = self.max_claims_per_call
        # Several calls on these contexts (per_claim, batches, draws): their shared prefix
        # is worth a provider cache write.
        reused = len(claims) > size or self.samples > 1
        await asyncio.gather(
            *(
                self._verify_batch(
                    claims[start : start + size],
                    shown,
                    contexts,
                    found,
                    draw,
                    reused=reused,
                    reask=reask,
                )
                for start in range(0, len(claims), size)
            )
        )

    async def _verify_batch(
        self,
        batch: list[Claim],
        shown: Sequence[str],
        contexts: Sequence[str],
        found: dict[str, ClaimVerdict],
        draw: int,
        *,
        reused: bool = True,
        reask: bool = False,
    ) -> None:
        """Verify `batch` against `shown` (the contexts, or their truths); quotes are checked
        against the contexts themselves. `reask`: asked again, at the re-ask temperature."""
        prompt, schema, numbered = self._verification_prompt(shown, len(batch))
        # Contexts before claims: calls on the same contexts (per_claim, several batches or
        # draws) share their prompt up to the claims, which a provider's prompt cache reuses.
        messages = prompt.render(
            cache_contexts=reused,
            contexts=numbered.render() if numbered is not None else numbered_texts(shown),
            claims="\n".join(f"{i}. {c.text}" for i, c in enumerate(batch, start=1)),
        )
        try:
            reply = await self._ask(
                messages,
                prompt,
                schema,
                "verdicts",
                reply_validator(
                    Verification,
                    contexts=len(shown),
                    sentences=numbered,
                    claims=[c.text for c in batch],
                ),
                draw=draw,
                reask=reask,
            )
        except TruncatedOutputError:
            if len(batch) == 1:
                raise JudgeResponseError(
                    f"the verdict was cut off at max_tokens even for one claim; {RAISE_MAX_TOKENS}"
                ) from None
            half = len(batch) // 2
            await self._verify_batch(batch[:half], shown, contexts, found, draw, reask=reask)
            await self._verify_batch(batch[half:], shown, contexts, found, draw, reask=reask)
            return
        locate = self.judge.replies == "reasoned"
        collect_verdicts(reply, batch, numbered, contexts, found, locate=locate)

    def _verification_prompt(
        self, shown: Sequence[str], claims: int
    ) -> tuple[Prompt, dict[str, Any], SentenceIds | None]:
        """The verification prompt, its schema and the numbered sentences it shows: sentence
        ids to cite (flat in the compact prompt), or None where the contexts are so long that
        the ids would cost more than quotes: numbered contexts to quote from. A verify_claims
        prompt of your own is always used."""
        prompt = self.prompts["verify_claims"]
        bundled = "+sha256:" not in prompt.version
        compact = prompt.reply_format == "compact"
        numbered = SentenceIds.of(shown, flat=compact)  # split once: it costs per sample
        # A reasoned reply is read on a local server, where a quote's completion tokens are
        # slow and a small model's copy is seldom verbatim: its ids are always shown.
        if bundled and self.judge.replies != "reasoned" and numbered.cost_more_than_quotes(claims):
            self.quoted_asked = True
            return self.prompts[QUOTED_PROMPT], QUOTED_VERIFICATION_SCHEMA, None
        schema = COMPACT_VERIFICATION_SCHEMA if compact else VERIFICATION_SCHEMA
        return prompt, schema, numbered


def collect_verdicts(
    reply: Verification,
    batch: Sequence[Claim],
    numbered: SentenceIds | None,
    contexts: Sequence[str],
    found: dict[str, ClaimVerdict],
    *,
    locate: bool = False,
) -> None:
    """The checked verdict of each claim of `batch` the reply answers, into `found` (the
    first one a claim gets counts). `locate`: a verdict that cites nothing may take the
    sentence holding its claim's words as evidence (the reasoned prompt; `evidence`)."""
    for raw in reply.verdicts:
        # Numbers outside the batch answer no question we asked; they are dropped.
        if 1 <= raw.claim <= len(batch):
            claim = batch[raw.claim - 1]
            context, quote, note = evidence(raw, numbered, claim.text if locate else None)
            found.setdefault(
                claim.id,
                checked_verdict(
                    claim.id,
                    raw.verdict,
                    context=context,
                    quote=quote,
                    reason=f"{note} {raw.reason}".strip(),
                    contexts=contexts,
                    claim=claim.text,
                ),
            )


def _split_in_two(response: str) -> tuple[str, str] | None:
    units = split_units(response)
    if len(units) < 2:
        return None
    middle = units[len(units) // 2].start
    return response[:middle], response[middle:]
