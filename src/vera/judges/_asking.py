"""How an LLM judge asks its model and reads the reply: the part every mode, the turn judge,
the matrix and the relevance ratings share (`vera.judges._llm`).

`Asker` sends one request with its schema and validates the reply; a reply that fails
validation is re-asked once with what was wrong, in the prompt's words, at a temperature of
at least 0.3 (at 0 a small model repeats itself byte for byte), and an empty claim list for a
response with checkable sentences is asked for again once. It reads the judge's settings
(model, temperature, max_tokens, prompts) at each call, so a replica, or a copy of the judge at
temperature 0, asks with its own. Beside it, what reading a reply needs everywhere: the
validation checked against the sample (`reply_validator`), a cited sentence resolved to its quote
(`evidence`), a claim located in the response (`located_claim`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from vera._types import Claim, Verdict
from vera._types._errors import JudgeResponseError
from vera.judges._evidence import shares_a_word
from vera.judges._offline._claims import checkable_sentences
from vera.judges._prompts import Prompt
from vera.judges._replies import Extraction, SingleCall, VerdictFields
from vera.judges._sentence_ids import SentenceIds
from vera.providers._base import ChatModel, ChatRequest, ChatResponse, Message
from vera.providers._jsonparse import IncompleteJSONError, MalformedJSONError, parse_json_object
from vera.providers._managed import ManagedChatModel

T = TypeVar("T")
ClaimReply = TypeVar("ClaimReply", Extraction, SingleCall)
Reply = TypeVar("Reply", bound=BaseModel)

_REASK_TEMPERATURE = 0.3
_DECODER = json.JSONDecoder()
RAISE_MAX_TOKENS = "raise --max-tokens (judge_max_tokens in vera.toml)"


class JudgeSettings(Protocol):
    """What the parts of an LLM judge read of it (`vera.judges.LLMJudge` is one)."""

    @property
    def model(self) -> ChatModel: ...
    @property
    def temperature(self) -> float: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def max_claims_per_call(self) -> int: ...
    @property
    def truths_cache_size(self) -> int: ...
    @property
    def prompts(self) -> dict[str, Prompt]: ...
    @property
    def replies(self) -> str: ...


class Asker:
    """One part of an LLM judge: asks the judge's model with the judge's settings, read at
    each call."""

    def __init__(self, judge: JudgeSettings) -> None:
        self.judge = judge

    @property
    def model(self) -> ChatModel:
        return self.judge.model

    @property
    def temperature(self) -> float:
        return self.judge.temperature

    @property
    def max_tokens(self) -> int:
        return self.judge.max_tokens

    @property
    def samples(self) -> int:
        return self.judge.samples

    @property
    def max_claims_per_call(self) -> int:
        return self.judge.max_claims_per_call

    @property
    def prompts(self) -> dict[str, Prompt]:
        return self.judge.prompts

    async def _ask_for_claims(
        self,
        messages: tuple[Message, ...],
        prompt: Prompt,
        schema: dict[str, Any],
        validate: Callable[[Any], ClaimReply],
        response: str,
    ) -> ClaimReply:
        """`_ask` for a claim list. An empty one, for a response in which VERA's splitter (the
        offline judge's) finds checkable sentences, is asked for again once, then an error:
        no claims would score a vacuous faithfulness of 1.0."""
        reply = await self._ask(messages, prompt, schema, "claims", validate)
        checkable = 0 if _has_claims(reply) else checkable_sentences(response)
        if not checkable:
            return reply
        reask = (
            *messages,
            Message(role="assistant", content=reply.model_dump_json()),
            Message(
                role="user",
                content="Your reply lists no claims, but the answer inside the <answer> tags "
                f"does contain factual statements: {checkable} of its sentences state something "
                "that can be checked. Split it into claims as asked, and reply again with only "
                "the JSON object.",
            ),
        )
        reply = await self._ask(reask, prompt, schema, "claims", validate)
        if _has_claims(reply):
            return reply
        raise JudgeResponseError(
            f"the judge extracted no claims from a response with {checkable} checkable "
            "sentence(s), even when asked again; the sample is not scored, as no claims would "
            "give it a vacuous faithfulness of 1.0"
        )

    async def _ask(
        self,
        messages: tuple[Message, ...],
        prompt: Prompt,
        schema: dict[str, Any],
        schema_name: str,
        validate: Callable[[Any], T],
        *,
        draw: int = 0,
        reask: bool = False,
    ) -> T:
        temperature = max(self.temperature, _REASK_TEMPERATURE) if reask else self.temperature
        request = ChatRequest(
            messages=messages,
            json_schema=schema,
            schema_name=schema_name,
            temperature=temperature,
            max_tokens=self.max_tokens,
            prompt_version=prompt.version,
            draw=draw,
        )
        response = await self._complete(request, prompt.name)
        key = _reply_key(schema)
        try:
            return validate(_reply_data(response, key))
        except (ValidationError, MalformedJSONError) as first_error:
            problem = _describe(first_error, key)
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
                ),
                # At temperature 0 a small model repeats its reply byte for byte; a little
                # randomness lets the re-ask be answered differently.
                "temperature": max(request.temperature, _REASK_TEMPERATURE),
            }
        )
        response = await self._complete(retry, prompt.name)
        try:
            return validate(_reply_data(response, key))
        except (ValidationError, MalformedJSONError) as second_error:
            raise JudgeResponseError(_invalid_twice(second_error, key)) from None

    async def _complete(self, request: ChatRequest, label: str) -> ChatResponse:
        """Call the model; a managed model also books the call's cost under the prompt's name."""
        if isinstance(self.model, ManagedChatModel):
            return await self.model.complete(request, label=label)
        return await self.model.complete(request)


def evidence(
    given: VerdictFields, numbered: SentenceIds | None, claim: str | None = None
) -> tuple[int | None, str, str]:
    """The context (1-based) and quote of a verdict, and a note for its reason: the cited
    sentence's own text, quoted by VERA; or, from a prompt that asks for quotes (an override,
    or long contexts), the judge's copy. A citation of a sentence that does not exist costs
    the citation, not the sample: no quote, and the note says why. A verdict that cites
    nothing takes the sentence its reason quotes or names; given the `claim` (the reasoned
    prompt, which asks for no citation of its own), else the one sentence that holds two
    thirds of the claim's content words, and the note says VERA located it."""
    if not given.sentence and _quotes_a_sentence(given) and numbered is not None:
        quoted = numbered.quoted_in(given.reason)
        if quoted is not None:
            return quoted[0], quoted[1], ""
        located = numbered.holding(claim) if claim is not None else None
        if located is not None:
            return located[0], located[1], LOCATED
    if not given.sentence or numbered is None:
        return given.context, given.quote, ""
    cited = numbered.resolve(given.sentence)
    if cited is None:
        return None, "", f"[cited sentence {given.sentence!r} does not exist]"
    return cited[0], cited[1], ""


LOCATED = (
    "[evidence located by VERA: the judge named no sentence; this one holds the claim's words]"
)


def _quotes_a_sentence(given: VerdictFields) -> bool:
    """Whether `given` may take its evidence from the sentence its reason quotes: a verdict
    that needs evidence, without a citation or quote of its own (the reasoned prompt asks for
    the deciding sentence quoted in the reason; docs/local-judges.md)."""
    return given.verdict is not Verdict.NO_EVIDENCE and not given.quote and bool(given.reason)


def numbered_texts(texts: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}] {text}" for i, text in enumerate(texts, start=1))


def _reply_key(schema: dict[str, Any]) -> str:
    """The one key the reply's object must have ("v", "claims", "verdicts"...)."""
    return str(schema.get("required", [""])[0])


def _reply_data(response: ChatResponse, key: str) -> Any:
    """The reply's JSON: structured output where the provider gave it, else parsed from text.
    Small models' deviations are read for what they mean: a bare list where the object was
    asked for is that object's `key` list, and an object holding its one list under another
    key ({"verdicts": [...]} for {"v": [...]}) is read under `key`."""
    data = response.data
    if data is None:
        try:
            data = parse_json_object(response.text)
        except MalformedJSONError:
            rows = _json_list(response.text)
            if rows is None:
                raise
            return {key: rows}
    lists = [name for name, value in data.items() if isinstance(value, list)]
    if key and key not in data and len(lists) == 1:
        return {**data, key: data[lists[0]]}
    return data


def _json_list(text: str) -> list[Any] | None:
    """The first JSON list in `text` (bare, fenced or after prose), or None."""
    start = text.find("[")
    while start >= 0:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("[", start + 1)
            continue
        return value if isinstance(value, list) else None
    return None


def _has_claims(reply: Extraction | SingleCall) -> bool:
    return any(claim.text.strip() for claim in reply.claims)


def _invalid_twice(error: ValidationError | MalformedJSONError, key: str) -> str:
    if isinstance(error, IncompleteJSONError):
        # Only the user can give the judge a bigger budget, so only the user is told how.
        return (
            "the judge's reply is not complete JSON, even when asked again (it ends mid-object: "
            f"cut off? {RAISE_MAX_TOKENS})"
        )
    return f"the judge's reply was invalid twice: {_describe(error, key)}"


def _describe(error: ValidationError | MalformedJSONError, key: str) -> str:
    """What was wrong, in the words of the prompt the model saw: never VERA's internal field
    paths ("verdicts.0.sentence"), which name fields the compact prompts never show."""
    if isinstance(error, IncompleteJSONError):
        # A cut-off reply can hold a complete inner object; it is named for what it is, never
        # as the outer object's missing field.
        return "it is not complete JSON (it ends mid-object)"
    if not isinstance(error, ValidationError):
        return str(error)
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    rows = [part for part in first["loc"] if isinstance(part, int)]
    fields = [part for part in first["loc"] if isinstance(part, str)]
    if rows and first["type"] == "missing" and len(fields) > 1:
        # A named field the prompt asked for: named as the prompt names it.
        return f'entry {rows[0] + 1} of the {key} list has no "{fields[-1]}"'
    if rows:
        return f"entry {rows[0] + 1} of the {key} list: {message}"
    if first["type"] == "missing":
        return f'the reply must be one JSON object {{"{key}": [...]}}'
    return message


def reply_validator(model: type[Reply], **sample: object) -> Callable[[Any], Reply]:
    """`model`'s validation of a reply, checked against the sample (`vera.judges._replies`):
    `contexts`, how many were shown; `response`, the answer the claims come from;
    `sentences`, the numbered sentences a verdict may cite; `answer`, the numbered answer
    sentences a claim may refer to."""
    return lambda data: model.model_validate(data, context=sample)


def located_claim(claim_id: str, text: str, response: str) -> Claim:
    """A claim of `response`, located where it appears verbatim, and flagged when it cannot
    come from it (no span, no content word in common)."""
    span = _locate(response, text)
    return Claim(claim_id, text, span, traceable=span is not None or shares_a_word(text, response))


def _locate(response: str, text: str) -> tuple[int, int] | None:
    start = response.find(text)
    if start < 0:
        start = response.lower().find(text.lower())
    return (start, start + len(text)) if start >= 0 else None
