"""The judge protocol, what a judge says about itself, and the checks VERA applies to whatever a
judge returns.

Every judge implements the whole `Judge` protocol; nothing is probed for. `BaseJudge` gives the
defaults a judge of your own can inherit (extract then verify, no relevance ratings, no model
calls), and `as_judge` adapts an object that only has `extract_claims` and `verify_claims`.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from vera.errors import ConfigError, JudgeResponseError
from vera.types import Claim, ClaimVerdict, RelevanceVerdict

__all__ = [
    "NO_CALLS",
    "BaseJudge",
    "CallEstimate",
    "Judge",
    "JudgeDescription",
    "JudgeWork",
    "as_judge",
    "judge_matrix",
    "match_matrix",
    "match_verdicts",
    "per_context_matrix",
]


class JudgeDescription(BaseModel):
    """What a judge tells a report about itself.

    `spec` is the judge's full spec, the one that rebuilds it: "offline", "offline:learned",
    "nli:MODEL", "openai:gpt-4o-mini", "cascade(offline:learned → openai:gpt-4o-mini)".
    `usage` holds calls, tokens and cost where the judge calls a model; `extra` holds what is
    particular to one kind of judge (a cascade's routing counts, an NLI model's labels).
    """

    model_config = ConfigDict(frozen=True)

    spec: str
    kind: Literal["offline", "nli", "llm", "cascade", "custom"] = "custom"
    mode: str | None = None
    samples: int | None = None
    temperature: float | None = None
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    def to_details(self) -> dict[str, Any]:
        """The report's `judge_details`: the set fields, with `extra` at the top level."""
        details: dict[str, Any] = {}
        for key in ("mode", "samples", "temperature"):
            value = getattr(self, key)
            if value is not None:
                details[key] = value
        if self.prompt_versions:
            details["prompt_versions"] = dict(self.prompt_versions)
        details.update(self.extra)
        if self.usage is not None:
            details["usage"] = self.usage
        return details


class JudgeWork(BaseModel):
    """One piece of judge work on one sample, as the analysis asks for it.

    - "analyse": claims of `text` and their verdicts against `contexts`;
    - "extract": claims of `text` only;
    - "verify": `claims` (their texts) against `contexts`;
    - "verify_matrix": `claims` against each of `contexts` alone (`Judge.verify_matrix`);
    - "rate_relevance": how relevant each of `texts` is to `query`.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["analyse", "extract", "verify", "verify_matrix", "rate_relevance"]
    text: str = ""
    query: str = ""
    contexts: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()


class CallEstimate(BaseModel):
    """Model calls and tokens a piece of judge work takes, by the model that answers."""

    model_config = ConfigDict(frozen=True)

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None
    """"provider:model" of the model called, for its price; None when nothing is called."""

    def __add__(self, other: CallEstimate) -> CallEstimate:
        return CallEstimate(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            model=self.model or other.model,
        )


NO_CALLS = CallEstimate()


@runtime_checkable
class Judge(Protocol):
    """What decides whether each claim of a response is supported by the contexts.

    The work methods are async because most judges wait on a network. `verify_claims` receives
    all claims of one sample at once, so a judge can batch them, and must return exactly one
    verdict per claim id. `analyse` extracts and verifies, in one step where the judge can.
    `plan_calls` says what a piece of work costs in model calls, from the same logic the judge
    runs, so a dry run counts what a run would do.
    """

    @property
    def spec(self) -> str:
        """The full spec that names (and rebuilds) this judge."""
        ...

    def describe(self) -> JudgeDescription:
        """The judge's spec, settings and usage so far, for the report."""
        ...

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Split `response` into atomic claims with unique ids."""
        ...

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """Return one verdict per claim, judged against `contexts` only."""
        ...

    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """Claims of `response` and one verdict each against `contexts`."""
        ...

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`; `ConfigError` from a judge that cannot say."""
        ...

    def plan_calls(self, work: Sequence[JudgeWork]) -> CallEstimate:
        """The model calls and tokens `work` would take, all of it together."""
        ...


class BaseJudge(ABC):
    """Defaults for a judge of your own: subclass it and write the two work methods.

    `analyse` extracts, then verifies every claim in one `verify_claims` call; `verify_matrix`
    makes one `verify_claims` call per context; relevance is not rated (a metric that needs it
    fails with a clear error); no model is called, so `plan_calls` counts nothing. `spec` is the
    class attribute `name`, else the class name.
    """

    name: str = ""

    @property
    def spec(self) -> str:
        return self.name or type(self).__name__

    def describe(self) -> JudgeDescription:
        return JudgeDescription(spec=self.spec)

    @abstractmethod
    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Split `response` into atomic claims with unique ids."""

    @abstractmethod
    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """Return one verdict per claim, judged against `contexts` only."""

    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        claims = await self.extract_claims(response, query=query)
        verdicts = await self.verify_claims(claims, contexts) if claims else []
        return claims, verdicts

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        """One `verify_claims` call per context (see `per_context_matrix`)."""
        return await per_context_matrix(self, claims, contexts)

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        raise ConfigError(f"judge {self.spec} cannot rate relevance; choose another judge")

    def plan_calls(self, work: Sequence[JudgeWork]) -> CallEstimate:
        return NO_CALLS


class _ClaimsOnlyJudge(BaseJudge):
    """An object with only `extract_claims` and `verify_claims`, as a full `Judge`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = type(inner).__name__

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        claims: list[Claim] = await self.inner.extract_claims(response, query=query)
        return claims

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        verdicts: list[ClaimVerdict] = await self.inner.verify_claims(claims, contexts)
        return verdicts


def as_judge(judge: object) -> Judge:
    """`judge` as a full `Judge`: itself when it implements the protocol, else an adapter for an
    object with the two work methods (`extract_claims`, `verify_claims`); `ConfigError` for
    anything else."""
    if isinstance(judge, Judge):
        return judge
    if callable(getattr(judge, "extract_claims", None)) and callable(
        getattr(judge, "verify_claims", None)
    ):
        return _ClaimsOnlyJudge(judge)
    raise ConfigError(
        f"{type(judge).__name__} is not a judge: give a judge name such as 'offline' or "
        "'openai:gpt-4o-mini', or an object with async extract_claims and verify_claims "
        "(subclass vera.judges.BaseJudge)"
    )


def match_verdicts(claims: Sequence[Claim], verdicts: Sequence[ClaimVerdict]) -> list[ClaimVerdict]:
    """Pair verdicts with claims 1:1, in claim order.

    A missing, extra, duplicated or unknown claim id means the judge answered a different
    question than the one asked; scoring anyway would give a silently wrong number, so this
    raises `JudgeResponseError` and the runner records it for that sample.
    """
    claim_ids = [c.id for c in claims]
    if len(set(claim_ids)) != len(claim_ids):
        raise JudgeResponseError("the judge returned claims with duplicate ids")
    by_id: dict[str, ClaimVerdict] = {}
    for verdict in verdicts:
        if not isinstance(verdict, ClaimVerdict):
            raise JudgeResponseError(
                f"verify_claims must return ClaimVerdict objects, got {type(verdict).__name__}"
            )
        if verdict.claim_id in by_id:
            raise JudgeResponseError(f"two verdicts for claim id {verdict.claim_id!r}")
        by_id[verdict.claim_id] = verdict
    missing = [cid for cid in claim_ids if cid not in by_id]
    extra = sorted(set(by_id) - set(claim_ids))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"no verdict for claim ids {missing}")
        if extra:
            parts.append(f"verdicts for unknown claim ids {extra}")
        raise JudgeResponseError("; ".join(parts))
    return [by_id[cid] for cid in claim_ids]


def match_matrix(
    claims: Sequence[Claim], rows: Sequence[Sequence[ClaimVerdict]], contexts: int
) -> list[list[ClaimVerdict]]:
    """Check a `verify_matrix` answer: one row per claim, in claim order, each of `contexts`
    verdicts on that claim. Any other shape is a `JudgeResponseError`, as in `match_verdicts`."""
    if len(rows) != len(claims):
        raise JudgeResponseError(
            f"verify_matrix returned {len(rows)} rows for {len(claims)} claims"
        )
    checked: list[list[ClaimVerdict]] = []
    for claim, row in zip(claims, rows, strict=True):
        cells = list(row)
        if len(cells) != contexts or not all(isinstance(v, ClaimVerdict) for v in cells):
            raise JudgeResponseError(
                f"verify_matrix must return {contexts} ClaimVerdicts for claim {claim.id!r}"
            )
        if any(v.claim_id != claim.id for v in cells):
            raise JudgeResponseError(f"the matrix row of claim {claim.id!r} names another claim")
        checked.append(cells)
    return checked


async def judge_matrix(
    judge: Judge, claims: Sequence[Claim], contexts: Sequence[str]
) -> list[list[ClaimVerdict]]:
    """`judge`'s claim-by-chunk matrix (RAGChecker's), checked by `match_matrix`: one row per
    claim, in claim order, of one verdict per context, the claim judged against that context
    alone. From the judge's own `verify_matrix` where it has one (an LLM judge answers the whole
    matrix in one call), else one `verify_claims` call per context, so a judge written to the
    protocol without the method still gives one."""
    own = getattr(judge, "verify_matrix", None)
    if callable(own):
        rows = await own(claims, contexts)
    else:
        rows = await per_context_matrix(judge, claims, contexts)
    return match_matrix(claims, rows, len(contexts))


async def per_context_matrix(
    judge: Judge, claims: Sequence[Claim], contexts: Sequence[str]
) -> list[list[ClaimVerdict]]:
    """The matrix as one `verify_claims` call per context, each with that context alone, run
    together; each verdict's `context_index` names the context of its column."""
    if not claims:
        return []
    columns = await asyncio.gather(*(judge.verify_claims(claims, [text]) for text in contexts))
    matched = [match_verdicts(claims, column) for column in columns]
    return [
        [column[i].model_copy(update={"context_index": k}) for k, column in enumerate(matched)]
        for i in range(len(claims))
    ]
