"""What the offline judge measures about a claim before its learned model turns that into a
probability of support: how much of it the contexts contain, and where they fall short.

Training (`training/verifier/train_features.py`) and inference both call `claim_features`, so
the model always sees features computed the same way. The order of `FEATURES` is the order of
the weights in `support_model.json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vera._types import Claim, ClaimVerdict, Verdict
from vera.judges._offline._index import Postings, context_index
from vera.judges._offline._passages import passage_postings
from vera.judges._offline._tokens import analyse, read_light

# Each feature grows as support shrinks, so the model is monotone by construction and cannot
# reward a missing word on data unlike RAGTruth's; richer sets scored no better on held-out
# documents (training/verifier/README.md).
FEATURES: tuple[str, ...] = (
    "missing_share",  # share of the claim's content words no context contains
    "missing_count",
    "missing_numbers",  # quantities no context states
    "best_sentence_gap",  # share of content words the best single context sentence lacks
    "lexical_contradicted",  # a number, name, negation or antonym conflict
    "number_contradicted",  # the conflict is a quantity: a far surer sign than the others
    "response_missing_share",  # the missing share over all the sample's claims
    "structured_context",  # a record, key-value list or table rather than prose
    "position",  # where in the response the claim sits, 0 to 1
)


@dataclass(frozen=True, slots=True)
class SampleFacts:
    """What every claim of one sample is compared with, computed once per sample."""

    content: frozenset[str]
    number_keys: frozenset[str]
    passages: tuple[Postings, ...]
    """Each context's sentences (`passages.passages`), indexed."""
    response_missing_share: float
    structured: bool

    @classmethod
    def of(cls, claims: Sequence[Claim], contexts: Sequence[str]) -> SampleFacts:
        indexes = [context_index(text) for text in contexts]
        content = frozenset().union(*(index.content for index in indexes))
        response_content = read_light("\n".join(c.text for c in claims)).content
        missing = sum(1 for w in response_content if w not in content)
        return cls(
            content=content,
            number_keys=frozenset().union(*(index.number_keys for index in indexes)),
            passages=tuple(passage_postings(text) for text in contexts),
            response_missing_share=missing / max(1, len(response_content)),
            structured=any(index.structured for index in indexes),
        )


def claim_features(
    claim: Claim, index: int, count: int, lexical: ClaimVerdict, sample: SampleFacts
) -> list[float]:
    """The values of `FEATURES` for the `index`-th of `count` claims, given its lexical verdict."""
    facts = analyse(claim.text)
    content = facts.content
    missing = sum(1 for w in content if w not in sample.content)
    best = max((index.best(content)[0] for index in sample.passages), default=0)
    contradicted = lexical.verdict is Verdict.CONTRADICTED
    # Number keys are part of `content`; one the quoted window lacks is what the conflict is.
    quoted: frozenset[str] = frozenset()
    if contradicted and facts.numbers:
        quoted = read_light(lexical.evidence).content
    return [
        missing / max(1, len(content)),
        float(missing),
        float(sum(1 for n in facts.numbers if n.key not in sample.number_keys)),
        1.0 - best / max(1, len(content)),
        float(contradicted),
        float(any(n.key not in quoted for n in facts.numbers) if quoted else False),
        sample.response_missing_share,
        float(sample.structured),
        index / max(1, count),
    ]
