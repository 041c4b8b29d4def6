"""The default `offline` judge's verdicts and probabilities of support: the lexical layer's
verdict, settled with the support model's probability.

The verdicts decide pass/fail (faithfulness is the mean of their weights) and the
probabilities rank (`ClaimVerdict.entailment`, their product). So a verdict must be what a
reader would say of the claim, and its probability must not contradict it:

- a claim the words rule out keeps its lexical verdict and at most `RULED_OUT` (0.5), and so
  does any other claim left NO_EVIDENCE (on RAGTruth dev this also ranks answers better:
  AUROC 0.777 against 0.755 uncapped);
- only the words make a claim FULLY_SUPPORTED;
- a claim the words leave short but not far (`verify.CLOSEST`: at least 30 % of its words in
  a window) is PARTIALLY_SUPPORTED from P `partial_cut` (in the model card; 0.89 shipped), a
  likely paraphrase; below that, NO_EVIDENCE.

The model alone gives a planted wrong number about 0.8 (on RAGTruth few lexical conflicts are
hallucinations), so a verdict that names what is wrong also scales the probability down:

| lexical verdict                                    | weight |
|----------------------------------------------------|--------|
| CONTRADICTED (a number, name, negation, antonym, "only") | 0.7 |
| NO_EVIDENCE: a quantity no context states          | 0.7    |
| NO_EVIDENCE: a name no context names               | 0.5    |
| NO_EVIDENCE: no content word in common             | 0.5    |
| any other                                          | 1.0    |

Weights and cut-off were chosen on RAGTruth dev by cross-validation over source documents
(`training/verifier/choose_weights.py`; figures in `training/verifier/README.md`).
"""

from __future__ import annotations

from dataclasses import dataclass

from vera._types import ClaimVerdict, Verdict
from vera.judges._offline._verify import CLOSEST, NOTHING, UNNAMED, UNSHARED, UNSTATED

RULED_OUT = 0.5
"""The most probability a claim judged NO_EVIDENCE or CONTRADICTED keeps: never better than
even odds, whatever the model says about claims like it."""


@dataclass(frozen=True, slots=True)
class LexicalWeights:
    """What a lexical verdict multiplies the support model's probability by."""

    contradicted: float = 0.7
    unstated_quantity: float = 0.7
    unnamed_name: float = 0.5
    unshared: float = 0.5

    def of(self, verdict: ClaimVerdict) -> float:
        """The weight for `verdict`: 1 unless it names what is wrong with the claim."""
        if verdict.verdict is Verdict.CONTRADICTED:
            return self.contradicted
        if verdict.verdict is Verdict.NO_EVIDENCE and verdict.reason:
            if verdict.reason.startswith(UNSTATED):
                return self.unstated_quantity
            if verdict.reason.startswith(UNNAMED):
                return self.unnamed_name
            if verdict.reason.startswith(UNSHARED):
                return self.unshared
        return 1.0


LEXICAL_WEIGHTS = LexicalWeights()


def rules_out(verdict: ClaimVerdict) -> bool:
    """Whether the words alone rule the claim out: a conflict with a context, or NO_EVIDENCE
    because it states a quantity or a name no context states, shares no word with any, or
    says nothing checkable."""
    if verdict.verdict is Verdict.CONTRADICTED:
        return True
    return verdict.verdict is Verdict.NO_EVIDENCE and (verdict.reason or "").startswith(
        (UNSTATED, UNNAMED, UNSHARED, NOTHING)
    )


def lexical_support(
    verdict: ClaimVerdict,
    probability: float,
    partial_cut: float,
    weights: LexicalWeights = LEXICAL_WEIGHTS,
) -> ClaimVerdict:
    """The default judge's verdict from the lexical one and the model's `probability`.

    The probability, times the lexical verdict's weight, is the claim's P(supported). A claim
    the words rule out keeps its lexical verdict, and at most `RULED_OUT`. Only the words make
    a claim FULLY_SUPPORTED (a context window holds nearly all of them); a probability of at
    least `partial_cut` lifts a claim they leave short, but not far (`verify.CLOSEST`), to
    PARTIALLY_SUPPORTED, so a likely paraphrase is not NO_EVIDENCE, an invented qualifier
    ("the internal project") is not FULLY_SUPPORTED and an invented sentence stays
    NO_EVIDENCE.
    """
    p = probability * weights.of(verdict)
    if rules_out(verdict):
        return with_probability(verdict, verdict.verdict, min(p, RULED_OUT))
    if verdict.verdict is Verdict.FULLY_SUPPORTED:
        kind = Verdict.FULLY_SUPPORTED
    elif verdict.verdict is Verdict.PARTIALLY_SUPPORTED or (
        p >= partial_cut and (verdict.reason or "").startswith(CLOSEST)
    ):
        kind = Verdict.PARTIALLY_SUPPORTED
    else:
        # Unsupported is unsupported: the probability says no more than even odds either.
        return with_probability(verdict, Verdict.NO_EVIDENCE, min(p, RULED_OUT))
    return with_probability(verdict, kind, p)


def with_probability(lexical: ClaimVerdict, verdict: Verdict, probability: float) -> ClaimVerdict:
    """`lexical` with `verdict` and `probability`, the reason leading with the probability."""
    reason = f"P(supported) = {probability:.2f}" + (f"; {lexical.reason}" if lexical.reason else "")
    return lexical.model_copy(
        update={"verdict": verdict, "reason": reason, "entailment": probability}
    )
