"""Conversations shown as threads: every message in order (user, assistant, tool, system),
each verified assistant turn with its claims, verdicts and the source each verdict rests on.

One view model, one template partial (`templates/thread.html.j2`), two producers: the HTML
report (so `vera report` and `vera view`) builds its threads here from a run's turn results
and the conversations as read from the dataset; `vera conversations --html` builds them from
its `ConversationScore`s (`vera._conversations`). Both pages render the same macro, so a thread
looks the same wherever it shows.

A report shows at most `THREAD_LIMIT` threads, the worst conversations first (those with an
unfaithful turn, earliest first); the rest are named in a note, as the sample list details
only its worst samples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from vera._types import Context, Sample, SampleResult, SampleStatus, Verdict
from vera._types._conversations import SOURCE_KIND_KEY, Conversation, Role, SourceKind, Turn
from vera._types._turns import ConversationSummary, ConversationTurns
from vera.render._samples import VERDICTS, VerdictStyle

THREAD_LIMIT = 50
"""The most conversations a report shows as threads: the worst ones."""
LONG_TEXT = 600
"""A tool result or system message longer than this shows collapsed."""

_Verdicts = Callable[[int], "ThreadTurn | None"]

INCONSISTENT_NOTE = "contradicts an earlier assistant turn"
"""The note on a claim the consistency check found contradicting an earlier turn."""
_EARLIER = "the assistant's earlier turns"


@dataclass(frozen=True)
class ThreadClaim:
    """One claim of an assistant turn with its verdict and where the verdict rests (`source`:
    "tool get_order, turn 4", "user, turn 1", "no source"). `note` marks a claim flagged for
    another reason than its verdict (it contradicts an earlier assistant turn)."""

    text: str
    verdict: Verdict
    source: str
    source_kind: str | None = None
    note: str = ""

    @property
    def style(self) -> VerdictStyle:
        """How its verdict badge is shown (the report's own badge)."""
        return VERDICTS[self.verdict]


@dataclass(frozen=True)
class ThreadTurn:
    """What the judge made of one assistant turn: its claims and verdicts, its score, and
    whether it is flagged (None: not scored). `anchor` links to the turn's sample in the
    report's sample list (`#id=…`, which the report's script opens), where the page has one."""

    sample_id: str
    status: str
    score: float | None
    flagged: bool | None
    first_unfaithful: bool = False
    claims: tuple[ThreadClaim, ...] = ()
    inconsistent: tuple[ThreadClaim, ...] = ()
    repeated: tuple[str, ...] = ()
    anchor: str | None = None
    contradicts: bool = False
    """Whether a claim of the turn contradicts an earlier assistant turn, where the page knows
    the turn but not the claims (a run's report keeps the consistency pass's counts and turn
    numbers, not its verdicts; `inconsistent` lists the claims where they are known)."""


@dataclass(frozen=True)
class ThreadMessage:
    """One message of a thread, numbered as the conversation numbers its turns (None where
    the number is not known: a question rebuilt from a turn sample's query)."""

    number: int | None
    role: str
    text: str
    tool_name: str | None = None
    call_id: str | None = None
    calls: tuple[tuple[str, str | None, str], ...] = ()
    """The tool calls an assistant message made: (name, call id, arguments)."""
    contexts: tuple[Context, ...] = ()
    """What was retrieved for an assistant turn."""
    tools_seen: tuple[ThreadMessage, ...] = ()
    """Tool results held on the assistant turn itself (DeepEval's `tools_called`)."""
    verdicts: ThreadTurn | None = None

    @property
    def long(self) -> bool:
        """Whether the text shows collapsed."""
        return len(self.text) > LONG_TEXT


@dataclass(frozen=True)
class Thread:
    """A conversation as a thread, with its aggregates as (label, value) pairs."""

    id: str
    messages: tuple[ThreadMessage, ...]
    facts: tuple[tuple[str, str], ...] = ()
    flagged: bool = False
    note: str = ""
    """Why the thread is incomplete, where it is (its messages could not be read)."""


@dataclass
class ThreadWants:
    """The conversations a report shows as threads, and their turn results as the one pass
    over the results meets them."""

    ids: tuple[str, ...]
    results: dict[str, SampleResult] = field(default_factory=dict)

    @classmethod
    def of(cls, block: ConversationSummary | None, limit: int = THREAD_LIMIT) -> ThreadWants:
        """The worst `limit` conversations of `block` (see `worst_conversations`)."""
        return cls(ids=tuple(c.id for c in worst_conversations(block, limit)))

    def add(self, result: SampleResult) -> None:
        """Keep `result` when it is a turn of a wanted conversation."""
        if result.turn is not None and result.turn.conversation_id in self.ids:
            self.results[result.id] = result


def worst_conversations(block: ConversationSummary | None, limit: int) -> list[ConversationTurns]:
    """At most `limit` conversations of `block`, the worst first: those with an unfaithful
    turn first (the lowest share, then the earliest first unfaithful turn, first), then the
    rest in the block's order."""
    if block is None:
        return []
    return sorted(block.conversations, key=_badness)[:limit]


def _badness(c: ConversationTurns) -> tuple[int, float, int]:
    share = 1.0 if c.faithful_turns is None else c.faithful_turns
    return (0 if c.unfaithful_turns else 1, share, c.first_unfaithful_turn or 0)


def thread_message(number: int, turn: Turn, verdicts: ThreadTurn | None = None) -> ThreadMessage:
    """One turn of a conversation as read, as a thread message."""
    seen = tuple(
        ThreadMessage(number, Role.TOOL.value, r.text, tool_name=r.tool_name, call_id=r.call_id)
        for r in turn.tool_results
    )
    return ThreadMessage(
        number=number,
        role=turn.role.value,
        text=turn.content,
        tool_name=turn.tool_name,
        call_id=turn.call_id,
        calls=tuple((c.name, c.id, c.arguments) for c in turn.tool_calls),
        contexts=turn.contexts,
        tools_seen=seen,
        verdicts=verdicts,
    )


def report_threads(
    block: ConversationSummary,
    wants: ThreadWants,
    conversations: Mapping[str, Conversation],
    samples: Mapping[str, Sample],
    *,
    base: str = "",
) -> list[Thread]:
    """The wanted conversations of a run's report as threads, worst first. Each turn links to
    its sample at `base` + `#id=…` (`base` empty: on the report's own page)."""
    by_id = {c.id: c for c in block.conversations}
    return [
        _report_thread(by_id[i], block.metric, wants, conversations.get(i), samples, base)
        for i in wants.ids
        if i in by_id
    ]


def _report_thread(
    scores: ConversationTurns,
    metric: str,
    wants: ThreadWants,
    conversation: Conversation | None,
    samples: Mapping[str, Sample],
    base: str,
) -> Thread:
    def verdicts(number: int) -> ThreadTurn | None:
        sample_id = f"{scores.id}/turn-{number}"
        result = wants.results.get(sample_id)
        if result is None:
            return None
        return _turn_verdicts(scores, metric, result, samples.get(sample_id), base)

    if conversation is not None and _matches(conversation, scores, wants):
        messages = tuple(
            thread_message(n, t, verdicts(n)) for n, t in enumerate(conversation.turns, start=1)
        )
        note = ""
    else:
        messages = tuple(_from_samples(scores, wants, samples, verdicts))
        note = (
            "The conversation's messages could not be read from the dataset (or it changed "
            "since the run), so only what its turn samples hold shows: the user's messages "
            "and tool results its turns were verified against, and each assistant turn; "
            "system messages and tool calls are not among them."
        )
    return Thread(scores.id, messages, _facts(scores), bool(scores.unfaithful_turns), note)


def _matches(conversation: Conversation, scores: ConversationTurns, wants: ThreadWants) -> bool:
    """Whether the conversation as read now is the one the run judged: each judged turn an
    assistant message that holds the response judged (a dataset edited since the run would
    otherwise put another text beside the verdicts)."""
    for number in scores.turns:
        if not 0 < number <= len(conversation.turns):
            return False
        turn = conversation.turns[number - 1]
        result = wants.results.get(f"{scores.id}/turn-{number}")
        if turn.role is not Role.ASSISTANT:
            return False
        judged = _flat(result.response or "")[:60] if result is not None else ""
        if judged and judged not in _flat(turn.content):
            return False
    return True


def _flat(text: str) -> str:
    return " ".join(text.split())


def _facts(scores: ConversationTurns) -> tuple[tuple[str, str], ...]:
    share = "n/a" if scores.faithful_turns is None else f"{scores.faithful_turns:.3f}"
    first = scores.first_unfaithful_turn
    return (
        ("faithful turns", f"{share} of {scores.scored_turns} scored"),
        ("first unfaithful turn", "none" if first is None else str(first)),
        ("consistency", consistency_fact(scores.consistency, scores.checked_claims)),
    )


def consistency_fact(consistency: float | None, checked: int) -> str:
    """A consistency figure with what it is over: "0.500 of 2 checked claims", or why there
    is none (no claim was checked: no turn had an earlier assistant turn, or no consistency
    pass was made), never a bare 1.0 or blank."""
    if consistency is None:
        return "n/a (no claim checked against an earlier turn)"
    return f"{consistency:.3f} of {checked} checked claim{'' if checked == 1 else 's'}"


def _from_samples(
    scores: ConversationTurns,
    wants: ThreadWants,
    samples: Mapping[str, Sample],
    verdicts: _Verdicts,
) -> Iterable[ThreadMessage]:
    """Without the conversation, what its turn samples hold, in order: the user's messages
    and the tool results (each context is tagged with its kind and turn), and each assistant
    turn as judged. Where the user's words are no context (`--no-user-facts`), the question
    a turn answered (its sample's query) stands before it, unnumbered."""
    placed: dict[float, ThreadMessage] = {}
    previous = 0
    for number in scores.turns:
        sample_id = f"{scores.id}/turn-{number}"
        sample, result = samples.get(sample_id), wants.results.get(sample_id)
        contexts: Sequence[Context] = sample.contexts if sample is not None else ()
        for context in contexts:
            heard = _heard(context, number)
            if heard is not None and heard.number is not None:
                placed.setdefault(heard.number, heard)
        asked = any(previous < n < number and m.role == Role.USER.value for n, m in placed.items())
        if sample is not None and sample.query and not asked:
            placed[number - 0.5] = ThreadMessage(None, Role.USER.value, sample.query)
        response = (result.response if result else None) or (sample.response if sample else "")
        placed[number] = ThreadMessage(
            number,
            Role.ASSISTANT.value,
            response or "",
            contexts=tuple(c for c in contexts if _kind(c) == SourceKind.RETRIEVED.value),
            tools_seen=tuple(
                m for c in contexts if (m := _heard(c, number)) and m.number == number
            ),
            verdicts=verdicts(number),
        )
        previous = number
    return [placed[key] for key in sorted(placed)]


def _kind(context: Context) -> object:
    return context.metadata.get(SOURCE_KIND_KEY)


def _heard(context: Context, number: int) -> ThreadMessage | None:
    """A context a turn sample holds as the message it was: what the user said, or a tool's
    result (numbered by the turn it came in; a tool result held on the assistant turn itself
    has that turn's number)."""
    turn = context.metadata.get("turn")
    if not isinstance(turn, int) or isinstance(turn, bool):
        return None
    if _kind(context) == SourceKind.USER.value:
        return ThreadMessage(turn, Role.USER.value, context.text)
    if _kind(context) == SourceKind.TOOL.value and turn <= number:
        meta = context.metadata
        name, call = meta.get("tool_name"), meta.get("call_id")
        return ThreadMessage(
            turn,
            Role.TOOL.value,
            context.text,
            tool_name=name if isinstance(name, str) else None,
            call_id=call if isinstance(call, str) else None,
        )
    return None


def _turn_verdicts(
    scores: ConversationTurns,
    metric: str,
    result: SampleResult,
    sample: Sample | None,
    base: str,
) -> ThreadTurn:
    number = result.turn.turn if result.turn is not None else 0
    found = result.results.get(metric)
    scored = result.status is SampleStatus.SCORED and found is not None
    repeated = sample.metadata.get("repeated", ()) if sample is not None else ()
    return ThreadTurn(
        sample_id=result.id,
        status=result.status.value,
        score=found.score if scored and found is not None else None,
        flagged=(number in scores.unfaithful_turns) if scored else None,
        first_unfaithful=number == scores.first_unfaithful_turn,
        contradicts=number in scores.inconsistent_turns,
        claims=tuple(_claims(result, sample)),
        inconsistent=tuple(
            ThreadClaim(c.text, Verdict.CONTRADICTED, _EARLIER, None, INCONSISTENT_NOTE)
            for c in scores.inconsistent_claims
            if c.turn == number
        ),
        repeated=tuple(str(s) for s in repeated) if isinstance(repeated, list | tuple) else (),
        anchor=base + "#id=" + quote(result.id, safe=""),
    )


def _claims(result: SampleResult, sample: Sample | None) -> Iterable[ThreadClaim]:
    contexts = result.contexts or (sample.contexts if sample is not None else ())
    for claim in result.claims:
        index = claim.context_index
        cited = contexts[index] if index is not None and 0 <= index < len(contexts) else None
        yield ThreadClaim(
            text=claim.text,
            verdict=claim.verdict,
            source=_source(cited, index),
            source_kind=cited.metadata.get(SOURCE_KIND_KEY) if cited is not None else None,
        )


def _source(cited: Context | None, index: int | None) -> str:
    if cited is not None:
        return cited.source or f"context {index}"
    return "no source" if index is None else f"context {index}"
