"""`OfflineJudge`: VERA's built-in judge, deterministic, with no key, network or download."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ParamSpec, TypeVar

from vera._sample_limits import check_deadline
from vera._types import Claim, ClaimVerdict, PartialRule, RelevanceVerdict, Verdict
from vera.judges._base import BaseJudge, JudgeDescription
from vera.judges._offline._claims import extract_claims
from vera.judges._offline._features import SampleFacts, claim_features
from vera.judges._offline._index import LONG_TEXT
from vera.judges._offline._languages import SUPPORTED, reading
from vera.judges._offline._lexical_support import RULED_OUT, lexical_support, with_probability
from vera.judges._offline._model import SupportModel, load_model
from vera.judges._offline._relevance import rate_relevance
from vera.judges._offline._sample_language import response_lexicon, sample_lexicon
from vera.judges._offline._verify import Settings, verify

OFFLINE_PARTIAL_RULE = PartialRule.SUPPORTED
"""How the offline judges' PARTIALLY_SUPPORTED counts in the answer verdict: they give it to a
claim the words leave short but the model reads as a likely paraphrase, support they cannot
confirm word for word, so it counts as supported. The one place to flip it."""

_P = ParamSpec("_P")
_T = TypeVar("_T")


class OfflineJudge(BaseJudge):
    """A judge that needs nothing: no key, no network, no model download.

    Claims are the response's sentences, list items and independent clauses, with exact spans.
    Each claim is aligned with the one- or two-sentence context window that shares most of its
    content words (stemmed, stopwords dropped, numbers normalised), and that window is quoted as
    the evidence.

    With `learned=True` (`--judge offline:learned`) a small logistic model shipped with VERA,
    trained on human labels (RAGTruth), turns what the alignment found (the share of the
    claim's words and numbers no context holds, the best sentence's coverage, the lexical
    verdict, ...) into a calibrated probability that the contexts support the claim
    (`ClaimVerdict.entailment`), and that probability decides: at least `min_support` (chosen
    on RAGTruth dev data, see `training/verifier/README.md`) is FULLY_SUPPORTED; below it, a
    claim the lexical layer found in conflict with a context is CONTRADICTED, else at least
    `partial_probability` is PARTIALLY_SUPPORTED and anything lower NO_EVIDENCE.

    By default (`learned=False`) the words decide what they can: a differing number, a
    different name, a negation flip, an antonym or what a context's "only" rules out in a
    well-aligned window is a contradiction; a quantity or name no context states, or no word in
    common, is NO_EVIDENCE; the share of content words the window covers decides between full,
    partial and no support. A claim the words leave short but not far is PARTIALLY_SUPPORTED
    when the same model's probability says it is a likely paraphrase. Each claim gets that
    probability, weighed down where the verdict names what is wrong and never above even odds
    for a claim the words rule out (`lexical_support.py`). Structured contexts (JSON records,
    `key: value` lines, tables) are read field by field (`structured.py`), and a rounding or a
    unit change of a stated quantity is that quantity (`quantities.py`).

    Args:
        full_support: Share of the claim's content words the best window must contain for
            FULLY_SUPPORTED.
        partial_support: Share needed for PARTIALLY_SUPPORTED; below it the claim has
            NO_EVIDENCE unless the probability lifts it (see above).
        contradiction_alignment: Share of the claim's other content words a window must
            contain before a differing bare number, a different name, a negation flip or an
            antonym in it counts as CONTRADICTED rather than NO_EVIDENCE.
        number_alignment: The same share for numbers with a unit ("30 days" vs "60 days"),
            lower because the shared unit already ties the two quantities together.
        window_sentences: Most adjacent context sentences quoted together as evidence.
        learned: Let the shipped model's probability decide every verdict (the
            `offline:learned` judge); off by default, figures in docs/judges.md.
        min_support: Least probability that counts as FULLY_SUPPORTED; default from the model.
        partial_probability: Least probability that counts as PARTIALLY_SUPPORTED; default from
            the model.
        model_path: Another `support_model.json` (as `training/verifier/train_features.py`
            writes it) to use instead of the shipped one, learned or not.
        language: Read every sample in this language (an ISO 639-1 code of `SUPPORTED`)
            instead of identifying each one's. By default a sample is read in its response's
            language; one outside `SUPPORTED`, or whose contexts are in another language, is
            refused with `UnsupportedLanguageError` (docs/languages.md).

    Raises:
        ValueError: if a threshold is outside (0, 1], `partial_support` exceeds
            `full_support`, `window_sentences` is below 1, or `language` is not supported.
    """

    def __init__(
        self,
        *,
        full_support: float = 0.8,
        partial_support: float = 0.5,
        contradiction_alignment: float = 0.6,
        number_alignment: float = 0.3,
        window_sentences: int = 2,
        learned: bool = False,
        min_support: float | None = None,
        partial_probability: float | None = None,
        model_path: Path | None = None,
        language: str | None = None,
    ) -> None:
        thresholds = {
            "full_support": full_support,
            "partial_support": partial_support,
            "contradiction_alignment": contradiction_alignment,
            "number_alignment": number_alignment,
        }
        for label, value in thresholds.items():
            if not 0 < value <= 1:
                raise ValueError(f"{label} must be in (0, 1], got {value}")
        if partial_support > full_support:
            raise ValueError(
                f"partial_support ({partial_support}) must not exceed full_support ({full_support})"
            )
        if window_sentences < 1:
            raise ValueError(f"window_sentences must be at least 1, got {window_sentences}")
        self.language = _checked_language(language)
        self.settings = Settings(
            full_support=full_support,
            partial_support=partial_support,
            contradiction_alignment=contradiction_alignment,
            number_alignment=number_alignment,
            window_sentences=window_sentences,
        )
        self.learned = learned
        self.model: SupportModel = load_model(model_path)
        model = self.model
        self.min_support = (
            min_support if min_support is not None else model.min_support if learned else 1.0
        )
        self.partial_probability = (
            partial_probability
            if partial_probability is not None
            else model.partial_probability
            if learned
            else 0.0
        )
        for label, value in (
            ("min_support", self.min_support),
            ("partial_probability", self.partial_probability),
        ):
            if not 0 <= value <= 1:
                raise ValueError(f"{label} must be in [0, 1], got {value}")

    def __repr__(self) -> str:
        s = self.settings
        learned = (
            f", learned=True, min_support={self.min_support:.2f}"
            if self.learned
            else ", learned=False"
        )
        return (
            f"OfflineJudge(full_support={s.full_support}, partial_support={s.partial_support}, "
            f"contradiction_alignment={s.contradiction_alignment}, "
            f"number_alignment={s.number_alignment}, window_sentences={s.window_sentences}"
            f"{learned})"
        )

    partial_rule = OFFLINE_PARTIAL_RULE

    @property
    def spec(self) -> str:
        """ "offline", or "offline:learned" with the learned support model."""
        return "offline:learned" if self.learned else "offline"

    def describe(self) -> JudgeDescription:
        extra = {"min_support": self.min_support} if self.learned else {}
        return JudgeDescription(spec=self.spec, kind="offline", extra=extra)

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Split `response` into claims "c1", "c2", ... with exact spans; `query` is unused."""
        return await _off_loop_if_long(len(response), self._extract, response)

    def _extract(self, response: str) -> list[Claim]:
        # A language the judge cannot read is still split into claims (by sentence, which
        # every script has); `verify_claims` then refuses them.
        lexicon = response_lexicon(response, self.language)
        if lexicon is None:
            return extract_claims(response)
        with reading(lexicon):
            return extract_claims(response)

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order, each citing the context window it rests on."""
        chars = sum(map(len, contexts)) + sum(len(c.text) for c in claims)
        return await _off_loop_if_long(chars, self._verify, claims, contexts)

    def _verify(self, claims: Sequence[Claim], contexts: Sequence[str]) -> list[ClaimVerdict]:
        if not claims:
            return []
        with reading(sample_lexicon(claims, contexts, self.language)):
            return self._verify_in_language(claims, contexts)

    def _verify_in_language(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        lexical = verify(claims, contexts, self.settings)
        if not claims:
            return lexical
        if not contexts:
            return [v.model_copy(update={"entailment": 0.0}) for v in lexical]
        sample = SampleFacts.of(claims, contexts)
        settle = self._decide if self.learned else self._settle
        out = []
        for i, (claim, verdict) in enumerate(zip(claims, lexical, strict=True)):
            check_deadline()
            features = claim_features(claim, i, len(claims), verdict, sample)
            out.append(settle(verdict, self.model.support(features)))
        return out

    def _settle(self, lexical: ClaimVerdict, probability: float) -> ClaimVerdict:
        return lexical_support(lexical, probability, self.model.partial_cut)

    def _decide(self, lexical: ClaimVerdict, probability: float) -> ClaimVerdict:
        # The probability decides; the lexical layer names how a claim falls short. Settling
        # claims by words alone cost accuracy: on RAGTruth dev only 13 % of the lexical
        # conflicts and 20 % of the claims with half their words unseen are hallucinated
        # (10 % of all claims), and the model ranks them better (training/verifier/README.md).
        if probability >= self.min_support or lexical.verdict is Verdict.FULLY_SUPPORTED:
            # A claim whose words a context window holds is supported whatever the model
            # makes of claims like it.
            verdict = Verdict.FULLY_SUPPORTED
        elif lexical.verdict is Verdict.CONTRADICTED:
            verdict = Verdict.CONTRADICTED
        elif probability >= self.partial_probability:
            verdict = Verdict.PARTIALLY_SUPPORTED
        else:
            verdict = Verdict.NO_EVIDENCE
        if verdict.unsupported:
            # As the default judge: an unsupported verdict says no more than even odds.
            probability = min(probability, RULED_OUT)
        return with_probability(lexical, verdict, probability)

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`, by the query words it mentions."""
        chars = len(query) + sum(map(len, texts))
        return await _off_loop_if_long(chars, rate_relevance, query, texts)


def _checked_language(language: str | None) -> str | None:
    if language is not None and language not in SUPPORTED:
        raise ValueError(
            f"the offline judge does not read language {language!r}; it reads "
            f"{', '.join(SUPPORTED)} (docs/languages.md)"
        )
    return language


async def _off_loop_if_long(
    chars: int, work: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """`work(*args, **kwargs)`, in a worker thread when its input is over `LONG_TEXT` chars.

    Seconds of CPU on the event loop would hold up everything else on it: other samples' judge
    calls and their timeouts, the progress display. Below `LONG_TEXT` the thread hop costs more
    than it frees. The thread inherits the sample's deadline (`to_thread` copies the context),
    so work whose sample has timed out stops at its next check instead of running on unseen.
    """
    if chars <= LONG_TEXT:
        return work(*args, **kwargs)
    return await asyncio.to_thread(work, *args, **kwargs)
