"""How many calls, and about how many tokens, an LLM judge spends on a piece of work.

This is the plan of calls the judge's own code follows (`vera.judges.llm`): the dry run reads
it, and so does a cascade to count the calls it saved, so the rule lives here once. Prompt
tokens come from the real prompt templates plus the text sent; completion tokens from the
number of claims. Tokens are estimated at four characters each.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from vera.judges.base import NO_CALLS, CallEstimate, JudgeWork
from vera.providers.managed import CHARS_PER_TOKEN

if TYPE_CHECKING:
    from vera.judges.llm import LLMJudge

__all__ = ["CallPlanner", "tokens"]

# Tokens a model writes per claim: its text in the extraction, a verdict with quote and reason.
EXTRACTION_TOKENS_PER_CLAIM = 12
VERDICT_TOKENS_PER_CLAIM = 45
RATING_TOKENS = 25
# A matrix row lists only the contexts that address its claim, rarely more than one or two of
# them: a row's number and brackets, and about one verdict with its quote.
MATRIX_ROW_TOKENS = 8 + VERDICT_TOKENS_PER_CLAIM


def tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


def _numbered(texts: tuple[str, ...]) -> int:
    return sum(tokens(text) + 2 for text in texts)


class CallPlanner:
    """Counts the calls of one `LLMJudge` over a run's work; remembers which context sets'
    truths it has counted, as the judge remembers their truths."""

    def __init__(self, judge: LLMJudge) -> None:
        self.judge = judge
        self._truth_sets: set[tuple[str, ...]] = set()

    def _fixed(self, prompt: str) -> int:
        template = self.judge.prompts[prompt]
        return tokens(template.system + template.user)

    def _call(self, calls: int, prompt: int, completion: int) -> CallEstimate:
        return CallEstimate(
            calls=calls, prompt_tokens=prompt, completion_tokens=completion, model=self.judge.spec
        )

    def plan(self, work: JudgeWork) -> CallEstimate:
        if work.kind == "rate_relevance":
            if not work.texts:
                return NO_CALLS
            prompt = self._fixed("rate_relevance") + tokens(work.query) + _numbered(work.texts)
            return self._call(1, prompt, len(work.texts) * RATING_TOKENS)
        if work.kind == "extract":
            return self._extraction(work) if work.text.strip() else NO_CALLS
        if work.kind == "verify":
            return self._verification(work, self.judge.samples)
        if work.kind == "verify_matrix":
            return self._matrix(work)
        return self._analysis(work)

    def _analysis(self, work: JudgeWork) -> CallEstimate:
        if not work.text.strip():
            return NO_CALLS
        if self.judge.mode == "single_call" and work.contexts:
            asked = tokens(work.query) + tokens(work.text) + _numbered(work.contexts)
            verdicts = len(work.claims) * (EXTRACTION_TOKENS_PER_CLAIM + VERDICT_TOKENS_PER_CLAIM)
            first = self._call(1, self._fixed("single_call") + asked, tokens(work.text) + verdicts)
            return first + self._verification(work, self.judge.samples - 1)
        return self._extraction(work) + self._verification(work, self.judge.samples)

    def _extraction(self, work: JudgeWork) -> CallEstimate:
        prompt = self._fixed("extract_claims") + tokens(work.query) + tokens(work.text)
        completion = tokens(work.text) + len(work.claims) * EXTRACTION_TOKENS_PER_CLAIM
        return self._call(1, prompt, completion)

    def _verification(self, work: JudgeWork, draws: int) -> CallEstimate:
        """`draws` verifications of the claims, in batches of `max_claims_per_call`; no call
        without claims or contexts (those claims get NO_EVIDENCE unasked)."""
        if not work.claims or not work.contexts or draws < 1:
            return NO_CALLS
        total = self._truths(work.contexts) if self.judge.mode == "truths" else NO_CALLS
        size = self.judge.max_claims_per_call
        batches = math.ceil(len(work.claims) / size)
        contexts = _numbered(work.contexts)
        claims = sum(tokens(text) + 2 for text in work.claims)
        prompt = batches * (self._fixed("verify_claims") + contexts) + claims
        completion = len(work.claims) * VERDICT_TOKENS_PER_CLAIM
        return total + self._call(draws * batches, draws * prompt, draws * completion)

    def _matrix(self, work: JudgeWork) -> CallEstimate:
        """One call per draw for the whole claims-by-contexts matrix, in every mode; none
        without claims or contexts (`LLMJudge.verify_matrix` asks nothing then)."""
        draws = self.judge.samples
        if not work.claims or not work.contexts:
            return NO_CALLS
        claims = sum(tokens(text) + 2 for text in work.claims)
        prompt = self._fixed("verify_matrix") + _numbered(work.contexts) + claims
        completion = len(work.claims) * MATRIX_ROW_TOKENS
        return self._call(draws, draws * prompt, draws * completion)

    def _truths(self, contexts: tuple[str, ...]) -> CallEstimate:
        if contexts in self._truth_sets:
            return NO_CALLS
        self._truth_sets.add(contexts)
        # Truths restate the contexts, at most.
        return self._call(
            1, self._fixed("extract_truths") + _numbered(contexts), _numbered(contexts)
        )
