"""The judge protocol, what a judge says about itself, and the checks VERA applies to whatever a
judge returns.

A judge of your own needs only the two methods of `ClaimJudge` (extract claims, verify claims);
`as_judge` adapts such an object to the `Judge` the run calls, and `BaseJudge` gives the same
defaults to a subclass (extract then verify, no relevance ratings, no model calls). What a judge
can do beyond that is a capability, each a small protocol (`RelevanceRater`, `MatrixVerifier`,
`CallPlanner`) checked with isinstance, never probed for by name; `judge_capabilities` says which
a judge has, and `check_capabilities` refuses, when the plan is built, a judge that lacks one a
metric needs.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from vera._types import Claim, ClaimVerdict, Need, PartialRule, RelevanceVerdict
from vera._types._errors import ConfigError, JudgeResponseError
from vera._types._rubric import RubricRequest


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
    - "rate_relevance": how relevant each of `texts` is to `query`;
    - "rubric": `rubric`'s checklist answered, written first from `criteria` where it has
      no items (`vera.judges._rubric`).
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["analyse", "extract", "verify", "verify_matrix", "rate_relevance", "rubric"]
    text: str = ""
    query: str = ""
    contexts: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    group: str = ""
    """For "analyse" on a conversation turn: the group of turns verified together
    (`vera.judges._turns`), and `group_size` how many turns it has."""
    group_size: int = 0
    rubric: RubricRequest | None = None
    criteria: str = ""
    riders: tuple[JudgeWork, ...] = ()
    """For "analyse": the sample's "rubric" work, which a judge that rides rubrics asks in the
    same verification call (`vera.judges._rubric_batch`), and any other asks after it."""


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
class ClaimJudge(Protocol):
    """The least a judge is: it splits a response into claims and verifies them.

    `verify_claims` receives all claims of one sample at once, so a judge can batch them, and
    must return exactly one verdict per claim id. `as_judge` makes such an object a `Judge`.
    """

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Split `response` into atomic claims with unique ids."""
        ...

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """Return one verdict per claim, judged against `contexts` only."""
        ...


@runtime_checkable
class RelevanceRater(Protocol):
    """A judge that rates how relevant texts are to a query (`Need.RELEVANCE`)."""

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`."""
        ...


@runtime_checkable
class MatrixVerifier(Protocol):
    """A judge that answers the claim-by-chunk matrix itself (an LLM judge, in one call);
    any other judge gives it by one `verify_claims` call per context (`judge_matrix`)."""

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        """One row per claim, in claim order, of one verdict per context."""
        ...


@runtime_checkable
class CallPlanner(Protocol):
    """A judge that says what a piece of work costs in model calls, for the dry run."""

    def plan_calls(self, work: Sequence[JudgeWork]) -> CallEstimate:
        """The model calls and tokens `work` would take, all of it together."""
        ...


class Capability(StrEnum):
    """What a judge can do beyond extracting and verifying claims."""

    RATE_RELEVANCE = "rate_relevance"
    """`RelevanceRater`: rates texts' relevance to a query."""
    VERIFY_MATRIX = "verify_matrix"
    """`MatrixVerifier`: answers the claim-by-chunk matrix itself."""
    PLAN_CALLS = "plan_calls"
    """`CallPlanner`: counts the model calls of a piece of work."""


_PROTOCOLS: dict[Capability, type] = {
    Capability.RATE_RELEVANCE: RelevanceRater,
    Capability.VERIFY_MATRIX: MatrixVerifier,
    Capability.PLAN_CALLS: CallPlanner,
}

# What each need asks of the judge beyond claims. The matrix has a fallback for every judge
# (`judge_matrix`), so only relevance can be missing.
_NEEDED: dict[Need, frozenset[Capability]] = {
    Need.RELEVANCE: frozenset({Capability.RATE_RELEVANCE})
}


@runtime_checkable
class DeclaresCapabilities(Protocol):
    """A judge that says what it can do, where its methods alone do not tell: `BaseJudge`'s
    refusing `rate_relevance` default, a cascade that rates relevance only through a part."""

    @property
    def capabilities(self) -> frozenset[Capability]: ...


@runtime_checkable
class DeclaresPartialRule(Protocol):
    """A judge that says how its PARTIALLY_SUPPORTED counts in the answer verdict (every
    `BaseJudge` does; a judge that does not is read by the default, unsupported)."""

    @property
    def partial_rule(self) -> PartialRule: ...


def partial_rule(judge: object) -> PartialRule:
    """The rule `judge` declares for its PARTIALLY_SUPPORTED (`BaseJudge.partial_rule`),
    else the default: PARTIAL counts as unsupported."""
    if isinstance(judge, DeclaresPartialRule):
        return PartialRule(judge.partial_rule)
    return BaseJudge.partial_rule


def judge_capabilities(judge: object) -> frozenset[Capability]:
    """What `judge` can do: what it declares, else the capability protocols it implements."""
    if isinstance(judge, DeclaresCapabilities):
        return frozenset(judge.capabilities)
    return frozenset(c for c, protocol in _PROTOCOLS.items() if isinstance(judge, protocol))


def relevance_rater(judge: object) -> RelevanceRater:
    """`judge` as a `RelevanceRater`; `ConfigError` for a judge that cannot rate relevance."""
    if isinstance(judge, RelevanceRater) and Capability.RATE_RELEVANCE in judge_capabilities(judge):
        return judge
    spec = judge.spec if isinstance(judge, Judge) else type(judge).__name__
    raise ConfigError(f"judge {spec} cannot rate relevance; choose another judge")


def planned_calls(judge: object, work: Sequence[JudgeWork]) -> CallEstimate:
    """The model calls `work` takes by `judge`'s own count (`CallPlanner`); none for a judge
    that does not count them (as `BaseJudge`, which calls no model)."""
    return judge.plan_calls(work) if isinstance(judge, CallPlanner) else NO_CALLS


def check_capabilities(judge: Judge, needs: Mapping[str, frozenset[Need]]) -> None:
    """`ConfigError` naming the first metric (of `needs`, metric name → its needs) whose work
    `judge` cannot do, so a run fails when it is planned rather than midway."""
    has = judge_capabilities(judge)
    for metric, wanted in needs.items():
        for need in sorted(wanted):
            missing = sorted(_NEEDED.get(need, frozenset()) - has)
            if missing:
                what = missing[0].value.replace("_", " ")
                raise ConfigError(
                    f"metric {metric} needs a judge that can {what} "
                    f"(Capability.{missing[0].name}: {missing[0].value}); judge {judge.spec} "
                    "cannot: choose a judge that can (--judge offline or an LLM judge such as "
                    f"openai:gpt-4o-mini), or drop -m {metric}"
                )


@runtime_checkable
class Judge(Protocol):
    """The judge a run calls: a `ClaimJudge` with a spec, a description for the report, and
    defaults for the capabilities (see `BaseJudge`, and `as_judge` for a bare `ClaimJudge`).

    The work methods are async because most judges wait on a network. `verify_claims` receives
    all claims of one sample at once, so a judge can batch them, and must return exactly one
    verdict per claim id. `analyse` extracts and verifies, in one step where the judge can.
    Relevance ratings, the claim-by-chunk matrix and counting model calls are capabilities
    (`RelevanceRater`, `MatrixVerifier`, `CallPlanner`), reached through `relevance_rater`,
    `judge_matrix` and `planned_calls`.
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


class BaseJudge(ABC):
    """Defaults for a judge of your own: subclass it and write the two work methods.

    `analyse` extracts, then verifies every claim in one `verify_claims` call; `verify_matrix`
    makes one `verify_claims` call per context; relevance is not rated (a metric that needs it
    fails with a clear error); no model is called, so `plan_calls` counts nothing. `spec` is the
    class attribute `name`, else the class name.
    """

    name: str = ""
    partial_rule: PartialRule = PartialRule.UNSUPPORTED
    """How this judge's PARTIALLY_SUPPORTED counts in the answer verdict. By default as
    unsupported: a claim only partly stated in the sources states the rest without one. A
    judge whose PARTIAL means support it could not confirm (the offline judge) says so."""

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

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Matrix and call planning always (the defaults work for any subclass); relevance
        where the subclass overrides the refusing default."""
        found = {Capability.VERIFY_MATRIX, Capability.PLAN_CALLS}
        # The base class knows its own default refuses; an override is the subclass saying
        # it rates relevance.
        if type(self).rate_relevance is not BaseJudge.rate_relevance:
            found.add(Capability.RATE_RELEVANCE)
        return frozenset(found)


class _ClaimsOnlyJudge(BaseJudge):
    """An object with only `extract_claims` and `verify_claims`, as a full `Judge`; relevance
    ratings pass through where the object has `rate_relevance` (`RelevanceRater`)."""

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

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The defaults', and relevance where the object given rates it."""
        rates = {Capability.RATE_RELEVANCE} & judge_capabilities(self.inner)
        return frozenset({Capability.VERIFY_MATRIX, Capability.PLAN_CALLS, *rates})

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        if isinstance(self.inner, RelevanceRater):
            return await self.inner.rate_relevance(query, texts)
        return await super().rate_relevance(query, texts)


def as_judge(judge: object) -> Judge:
    """`judge` as a full `Judge`: itself when it implements the protocol, else an adapter for an
    object with the two work methods (`extract_claims`, `verify_claims`); `ConfigError` for
    anything else."""
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, ClaimJudge):
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
    if isinstance(judge, MatrixVerifier):
        rows = await judge.verify_matrix(claims, contexts)
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
