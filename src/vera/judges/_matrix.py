"""RAGChecker's claim-by-chunk matrix from an LLM judge (`verify_matrix`, asked only by the
diagnostic metrics): one call per draw in every mode, each claim against each context alone,
all claims together."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from vera._types import Claim, ClaimVerdict, Verdict
from vera._types._errors import JudgeResponseError
from vera.judges._asking import (
    RAISE_MAX_TOKENS,
    Asker,
    JudgeSettings,
    numbered_texts,
    reply_validator,
)
from vera.judges._evidence import checked_verdict
from vera.judges._replies import MATRIX_SCHEMA, Matrix, MatrixCell
from vera.judges._voting import majority_verdicts
from vera.providers._base import TruncatedOutputError

# Loaded in every mode, but only the diagnostic metrics ask for it (see `prompt_versions`).
MATRIX_PROMPT = "verify_matrix"


class ClaimMatrix(Asker):
    """The matrix of an LLM judge; `matrix_asked` says whether one was asked for."""

    def __init__(self, judge: JudgeSettings) -> None:
        super().__init__(judge)
        self.matrix_asked = False

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        """Each claim against each context alone, the whole matrix in one call per draw; a
        context the reply does not list for a claim is NO_EVIDENCE, and with several draws each
        cell gets its majority verdict."""
        if not claims or not contexts:
            return [[] for _ in claims]
        self.matrix_asked = True
        draws = await asyncio.gather(
            *(self._matrix_draw(claims, contexts, draw) for draw in range(self.samples))
        )
        # Voting is per cell: flattened, every draw lists the same cells in the same order.
        voted = majority_verdicts([[cell for row in draw for cell in row] for draw in draws])
        width = len(contexts)
        return [voted[i * width : (i + 1) * width] for i in range(len(claims))]

    async def _matrix_draw(
        self, claims: Sequence[Claim], contexts: Sequence[str], draw: int
    ) -> list[list[ClaimVerdict]]:
        """One full matrix: every claim gets its row, or this raises. Claims whose row the
        reply left out are asked for again once, alone."""
        found: dict[str, list[ClaimVerdict]] = {}
        await self._matrix_batch(list(claims), contexts, found, draw)
        missing = [c for c in claims if c.id not in found]
        if missing:
            await self._matrix_batch(missing, contexts, found, draw)
        still_missing = [c.id for c in claims if c.id not in found]
        if still_missing:
            raise JudgeResponseError(f"the judge gave no matrix row for claims {still_missing}")
        return [found[c.id] for c in claims]

    async def _matrix_batch(
        self,
        batch: list[Claim],
        contexts: Sequence[str],
        found: dict[str, list[ClaimVerdict]],
        draw: int,
    ) -> None:
        prompt = self.prompts[MATRIX_PROMPT]
        messages = prompt.render(
            contexts=numbered_texts(contexts),
            claims="\n".join(f"{i}. {c.text}" for i, c in enumerate(batch, start=1)),
        )
        try:
            reply = await self._ask(
                messages,
                prompt,
                MATRIX_SCHEMA,
                "matrix",
                reply_validator(Matrix, contexts=len(contexts)),
                draw=draw,
            )
        except TruncatedOutputError:
            # The reply grows with claims-by-contexts; halving the claims is the only cut left.
            if len(batch) == 1:
                raise JudgeResponseError(
                    f"the matrix row was cut off at max_tokens even for one claim; "
                    f"{RAISE_MAX_TOKENS}"
                ) from None
            half = len(batch) // 2
            await self._matrix_batch(batch[:half], contexts, found, draw)
            await self._matrix_batch(batch[half:], contexts, found, draw)
            return
        for row in reply.claims:
            # Numbers outside the batch answer no question we asked; they are dropped.
            if 1 <= row.claim <= len(batch):
                claim = batch[row.claim - 1]
                found.setdefault(claim.id, _matrix_row(claim, row.contexts, contexts))


def _matrix_row(
    claim: Claim, cells: Sequence[MatrixCell], contexts: Sequence[str]
) -> list[ClaimVerdict]:
    """One claim's verdict on each context, its quotes checked; the first cell the reply
    gives for a context counts, and a context it does not list is NO_EVIDENCE."""
    given: dict[int, ClaimVerdict] = {}
    for cell in cells:
        if (
            cell.context is not None
            and 1 <= cell.context <= len(contexts)
            and cell.context not in given
        ):
            checked = checked_verdict(
                claim.id,
                cell.verdict,
                context=cell.context,
                quote=cell.quote,
                reason=cell.reason,
                contexts=contexts,
                claim=claim.text,
            )
            given[cell.context] = checked.model_copy(update={"context_index": cell.context - 1})
    unlisted = "the judge found nothing on the claim in this context"
    return [
        given.get(k, ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, "", k - 1, unlisted))
        for k in range(1, len(contexts) + 1)
    ]
