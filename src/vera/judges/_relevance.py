"""Relevance ratings from an LLM judge: how relevant each text is to a query, all texts in one
call, the same in every mode."""

from __future__ import annotations

from collections.abc import Sequence

from vera._types import RelevanceVerdict
from vera._types._errors import JudgeResponseError
from vera.judges._asking import Asker, numbered_texts
from vera.judges._replies import RELEVANCE_SCHEMA, Ratings


class RelevanceRating(Asker):
    """The relevance ratings of an LLM judge."""

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`, all texts in one call; missing ratings are
        asked for again once."""
        prompt = self.prompts["rate_relevance"]
        found: dict[int, RelevanceVerdict] = {}
        for _ in range(2):
            missing = [n for n in range(1, len(texts) + 1) if n not in found]
            if not missing:
                break
            reply = await self._ask(
                prompt.render(query=query, texts=numbered_texts([texts[n - 1] for n in missing])),
                prompt,
                RELEVANCE_SCHEMA,
                "ratings",
                Ratings.model_validate,
            )
            for rating in reply.ratings:
                if 1 <= rating.text <= len(missing):
                    found.setdefault(
                        missing[rating.text - 1],
                        RelevanceVerdict(relevance=rating.relevance, reason=rating.reason),
                    )
        absent = [n for n in range(1, len(texts) + 1) if n not in found]
        if absent:
            raise JudgeResponseError(f"the judge gave no relevance rating for texts {absent}")
        return [found[n] for n in range(1, len(texts) + 1)]
