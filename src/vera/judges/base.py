"""The judge protocol and the checks VERA applies to whatever a judge returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from vera.errors import JudgeResponseError
from vera.types import Claim, ClaimVerdict

__all__ = ["Judge", "judge_details", "judge_name", "match_verdicts"]


@runtime_checkable
class Judge(Protocol):
    """Anything that splits a response into claims and checks claims against contexts.

    Both methods are async because most judges wait on a network. `verify_claims` receives all
    claims of one sample at once, so a judge can batch them into a single call, and must return
    exactly one verdict per claim id.

    A judge may also offer `async analyse(response, contexts, *, query=None)` returning
    `(claims, verdicts)`; the runner then calls that instead of the two methods, so a judge can
    extract and verify in one step.
    """

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Split `response` into atomic claims with unique ids."""
        ...

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """Return one verdict per claim, judged against `contexts` only."""
        ...


def judge_name(judge: object) -> str:
    """The name a report shows for a judge: its `name` attribute, else its class name."""
    name = getattr(judge, "name", None)
    return name if isinstance(name, str) and name else type(judge).__name__


def judge_details(judge: object) -> dict[str, Any]:
    """What a judge tells the report about itself (prompt versions, tokens, cost), if anything.

    A judge may offer a `details()` method returning plain data; others report nothing.
    """
    details = getattr(judge, "details", None)
    if not callable(details):
        return {}
    value = details()
    return dict(value) if isinstance(value, dict) else {}


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
