"""`LLMJudge`: claims and verdicts from a chat model, in two calls per sample.

Batched mode: one call extracts the numbered claims, one call verifies all of them against
the numbered contexts. The model only classifies; every score is still VERA's arithmetic.
What the model returns is checked, not trusted:

- a reply that fails validation is re-asked once with the validation error;
- verdicts must come back for exactly the claim numbers asked; missing ones are re-asked alone;
- each quote is looked up in the context it cites, and an invented quote is flagged;
- a reply cut off at max_tokens makes the judge split the work into smaller calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError, field_validator

from vera.errors import JudgeResponseError
from vera.judges.offline.segment import split_units
from vera.judges.prompts import Prompt, load_prompt
from vera.providers.base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    TruncatedOutputError,
)
from vera.providers.cost import CostLedger
from vera.providers.jsonparse import MalformedJSONError, parse_json_object
from vera.types import Claim, ClaimVerdict, Verdict

__all__ = ["LLMJudge"]

T = TypeVar("T")

_VERDICT_NAMES = [v.value for v in Verdict]
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"number": {"type": "integer"}, "text": {"type": "string"}},
                "required": ["number", "text"],
            },
        }
    },
    "required": ["claims"],
}
VERIFICATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "integer"},
                    "verdict": {"type": "string", "enum": _VERDICT_NAMES},
                    "context": {"type": ["integer", "null"]},
                    "quote": {"type": "string"},
                    "reason": {"type": "string"},
                },
                "required": ["claim", "verdict"],
            },
        }
    },
    "required": ["verdicts"],
}


class _ExtractedClaim(BaseModel):
    number: int
    text: str


class _Extraction(BaseModel):
    claims: list[_ExtractedClaim]


class _RawVerdict(BaseModel):
    claim: int
    verdict: Verdict
    context: int | None = None
    quote: str = ""
    reason: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _parse_verdict(cls, value: Any) -> Verdict:
        try:
            return Verdict.parse(value)
        except JudgeResponseError as exc:  # pydantic turns ValueError into a validation error
            raise ValueError(str(exc)) from None


class _Verification(BaseModel):
    verdicts: list[_RawVerdict]


class LLMJudge:
    """A judge backed by any `ChatModel` (wrap it in `ManagedChatModel` for retries and cache).

    Args:
        model: the chat model that answers.
        prompts_dir: a folder with your own `extract_claims.toml` / `verify_claims.toml`.
        max_claims_per_call: claims verified in one call; more are split across calls.
        temperature: sampling temperature (0 for the most repeatable verdicts).
        max_tokens: the reply budget of one call.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        prompts_dir: Path | None = None,
        max_claims_per_call: int = 25,
        temperature: float = 0.0,
        max_tokens: int = 2048,
    ) -> None:
        if max_claims_per_call < 1:
            raise ValueError("max_claims_per_call must be at least 1")
        self.model = model
        self.extract_prompt = load_prompt("extract_claims", prompts_dir)
        self.verify_prompt = load_prompt("verify_claims", prompts_dir)
        self.max_claims_per_call = max_claims_per_call
        self.temperature = temperature
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        return f"{self.model.provider}:{self.model.model}"

    @property
    def prompt_versions(self) -> dict[str, str]:
        """The version of each prompt, recorded with every result."""
        return {p.name: p.version for p in (self.extract_prompt, self.verify_prompt)}

    def details(self) -> dict[str, Any]:
        """Prompt versions, and calls, tokens and cost where the model keeps a ledger."""
        details: dict[str, Any] = {"mode": "batched", "prompt_versions": self.prompt_versions}
        ledger = getattr(self.model, "ledger", None)
        if isinstance(ledger, CostLedger):
            details["usage"] = ledger.summary()
        return details

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Numbered atomic claims, each located in the response where it appears verbatim."""
        if not response.strip():
            return []
        texts = await self._extract_texts(response, query or "")
        return [
            Claim(f"c{n}", text, _locate(response, text)) for n, text in enumerate(texts, start=1)
        ]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim; all claims go in one call unless the reply is too long."""
        if not contexts:
            return [
                ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason="no context was given")
                for c in claims
            ]
        found: dict[str, ClaimVerdict] = {}
        await self._verify_batches(list(claims), contexts, found)
        missing = [c for c in claims if c.id not in found]
        if missing:
            # Asking again for just the missing claims keeps the verdicts already given.
            await self._verify_batches(missing, contexts, found)
        still_missing = [c.id for c in claims if c.id not in found]
        if still_missing:
            raise JudgeResponseError(f"the judge gave no verdict for claims {still_missing}")
        return [found[c.id] for c in claims]

    async def _extract_texts(self, response: str, query: str) -> list[str]:
        messages = self.extract_prompt.render(query=query or "(none)", response=response)
        try:
            extraction = await self._ask(
                messages,
                self.extract_prompt,
                EXTRACTION_SCHEMA,
                "claims",
                _Extraction.model_validate,
            )
        except TruncatedOutputError:
            halves = _split_in_two(response)
            if halves is None:
                raise JudgeResponseError(
                    "the claim list was cut off at max_tokens even for one sentence; "
                    "raise max_tokens"
                ) from None
            first, second = halves
            return [
                *await self._extract_texts(first, query),
                *await self._extract_texts(second, query),
            ]
        ordered = sorted(extraction.claims, key=lambda c: c.number)
        return [c.text.strip() for c in ordered if c.text.strip()]

    async def _verify_batches(
        self, claims: list[Claim], contexts: Sequence[str], found: dict[str, ClaimVerdict]
    ) -> None:
        for start in range(0, len(claims), self.max_claims_per_call):
            await self._verify_batch(
                claims[start : start + self.max_claims_per_call], contexts, found
            )

    async def _verify_batch(
        self, batch: list[Claim], contexts: Sequence[str], found: dict[str, ClaimVerdict]
    ) -> None:
        messages = self.verify_prompt.render(
            contexts="\n\n".join(f"[{i}] {text}" for i, text in enumerate(contexts, start=1)),
            claims="\n".join(f"{i}. {c.text}" for i, c in enumerate(batch, start=1)),
        )
        try:
            reply = await self._ask(
                messages,
                self.verify_prompt,
                VERIFICATION_SCHEMA,
                "verdicts",
                _Verification.model_validate,
            )
        except TruncatedOutputError:
            if len(batch) == 1:
                raise JudgeResponseError(
                    "the verdict was cut off at max_tokens even for one claim; raise max_tokens"
                ) from None
            half = len(batch) // 2
            await self._verify_batch(batch[:half], contexts, found)
            await self._verify_batch(batch[half:], contexts, found)
            return
        for raw in reply.verdicts:
            # Numbers outside the batch answer no question we asked; they are dropped.
            if 1 <= raw.claim <= len(batch):
                claim = batch[raw.claim - 1]
                found.setdefault(claim.id, _to_verdict(claim, raw, contexts))

    async def _ask(
        self,
        messages: tuple[Message, ...],
        prompt: Prompt,
        schema: dict[str, Any],
        schema_name: str,
        validate: Callable[[Any], T],
    ) -> T:
        request = ChatRequest(
            messages=messages,
            json_schema=schema,
            schema_name=schema_name,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            prompt_version=prompt.version,
        )
        response = await self.model.complete(request)
        try:
            return validate(_reply_data(response))
        except (ValidationError, MalformedJSONError) as first_error:
            problem = _describe(first_error)
        retry = request.model_copy(
            update={
                "messages": (
                    *messages,
                    Message(role="assistant", content=response.text),
                    Message(
                        role="user",
                        content=f"That reply was not valid: {problem}. Reply again with only "
                        "the JSON object, in exactly the format asked for.",
                    ),
                )
            }
        )
        response = await self.model.complete(retry)
        try:
            return validate(_reply_data(response))
        except (ValidationError, MalformedJSONError) as second_error:
            raise JudgeResponseError(
                f"the judge's reply was invalid twice: {_describe(second_error)}"
            ) from None


def _reply_data(response: ChatResponse) -> Any:
    """The reply's JSON: structured output where the provider gave it, else parsed from text."""
    return response.data if response.data is not None else parse_json_object(response.text)


def _describe(error: ValidationError | MalformedJSONError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(error)


def _to_verdict(claim: Claim, raw: _RawVerdict, contexts: Sequence[str]) -> ClaimVerdict:
    index = (
        raw.context - 1 if raw.context is not None and 1 <= raw.context <= len(contexts) else None
    )
    quote = raw.quote.strip().strip('"“”').strip()
    quote_found: bool | None = None
    if quote:
        candidates = [index] if index is not None else range(len(contexts))
        hit = next((i for i in candidates if _contains(contexts[i], quote)), None)
        quote_found = hit is not None
        index = hit if hit is not None else index
    reason = raw.reason.strip()
    if quote_found is False:
        reason = f"[quote not found in the cited context] {reason}".strip()
    return ClaimVerdict(claim.id, raw.verdict, quote, index, reason, quote_found=quote_found)


def _normalise(text: str) -> str:
    return " ".join(text.replace("…", "...").split()).lower()


def _contains(context: str, quote: str) -> bool:
    """Whether `quote` occurs in `context`, ignoring case and whitespace; "..." may elide."""
    haystack = _normalise(context)
    position = 0
    for piece in (p.strip() for p in _normalise(quote).split("...")):
        if not piece:
            continue
        found = haystack.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def _locate(response: str, text: str) -> tuple[int, int] | None:
    start = response.find(text)
    if start < 0:
        start = response.lower().find(text.lower())
    return (start, start + len(text)) if start >= 0 else None


def _split_in_two(response: str) -> tuple[str, str] | None:
    units = split_units(response)
    if len(units) < 2:
        return None
    middle = units[len(units) // 2].start
    return response[:middle], response[middle:]
