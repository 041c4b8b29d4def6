"""The lexical `offline` judge's probability of support: the support model's, weighed by what
the words found.

The lexical judge keeps its verdicts, and gives each claim a probability of support
(`ClaimVerdict.entailment`), so faithfulness scores it by the product rule as it does
`offline:learned`. A verdict's weight alone ranks RAGTruth answers worse than content-word
overlap (AUROC 0.739); the support model's probability ranks them better (0.778). The model
alone, though, lets a planted wrong number pass: on RAGTruth few lexical conflicts are
hallucinations (names and negations 11 %, numbers 29 %, against 10 % of all claims), so it gives
one about 0.8. Here a verdict that names what is wrong scales the probability down:

| lexical verdict                                    | weight |
|----------------------------------------------------|--------|
| CONTRADICTED (a number, name, negation or antonym) | 0.5    |
| NO_EVIDENCE: a quantity no context states          | 0.6    |
| NO_EVIDENCE: a name no context names               | 0.8    |
| any other                                          | 1.0    |

The weights were chosen on RAGTruth dev by cross-validation over source documents, among those
that fail at least 7 of the bundled example's 11 planted numbers, negations and invented facts
(`training/verifier/choose_weights.py`; figures in `training/verifier/README.md`).
"""

from __future__ import annotations

from dataclasses import dataclass

from vera.judges.offline.verify import UNNAMED, UNSTATED
from vera.types import ClaimVerdict, Verdict

__all__ = ["LEXICAL_WEIGHTS", "LexicalWeights", "lexical_support", "with_probability"]


@dataclass(frozen=True, slots=True)
class LexicalWeights:
    """What a lexical verdict multiplies the support model's probability by."""

    contradicted: float = 0.5
    unstated_quantity: float = 0.6
    unnamed_name: float = 0.8

    def of(self, verdict: ClaimVerdict) -> float:
        """The weight for `verdict`: 1 unless it names what is wrong with the claim."""
        if verdict.verdict is Verdict.CONTRADICTED:
            return self.contradicted
        if verdict.verdict is Verdict.NO_EVIDENCE and verdict.reason:
            if verdict.reason.startswith(UNSTATED):
                return self.unstated_quantity
            if verdict.reason.startswith(UNNAMED):
                return self.unnamed_name
        return 1.0


LEXICAL_WEIGHTS = LexicalWeights()


def lexical_support(
    verdict: ClaimVerdict, probability: float, weights: LexicalWeights = LEXICAL_WEIGHTS
) -> ClaimVerdict:
    """`verdict` unchanged but for its probability of support: `probability` times its weight."""
    return with_probability(verdict, verdict.verdict, probability * weights.of(verdict))


def with_probability(lexical: ClaimVerdict, verdict: Verdict, probability: float) -> ClaimVerdict:
    """`lexical` with `verdict` and `probability`, the reason leading with the probability."""
    reason = f"P(supported) = {probability:.2f}" + (f"; {lexical.reason}" if lexical.reason else "")
    return lexical.model_copy(
        update={"verdict": verdict, "reason": reason, "entailment": probability}
    )
