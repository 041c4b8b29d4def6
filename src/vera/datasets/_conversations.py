"""Conversation rows: reading them, and turning each assistant turn into a sample to verify.

A row is a conversation when it holds a list of messages under one of these keys:

- `turns`: VERA's own turns, or DeepEval's `ConversationalTestCase` (`role`, `content`,
  `retrieval_context`, `tools_called` with each tool's `output`);
- `messages`: an OpenAI chat message list (`tool_calls` on assistant messages, `tool` messages
  with `tool_call_id`); an assistant message may carry its retrieved `contexts`;
- `user_input`: a RAGAS `MultiTurnSample` as `model_dump` writes it (`type` human / ai /
  tool, `tool_calls` with `name` and `args`).

Each assistant turn becomes one `Sample` (`turn_samples`), verified by the same engine as any
other: its contexts are what the turn could rely on, each tagged with its `SourceKind` in
`metadata["source_kind"]`, so a verdict's `context_index` says which source supports it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vera._text._segment import split_units
from vera._types import Context, Sample
from vera._types._conversations import (
    INTERMEDIATE_KEY,
    SOURCE_KIND_KEY,
    Conversation,
    Role,
    SourceKind,
    ToolCall,
    ToolResult,
    Turn,
)
from vera._types._errors import ConfigError, DatasetError, DatasetRowError
from vera._types._turns import group_turns
from vera.datasets._agent_fields import (
    AGENT_FIELDS,
    MADE_CALLS_KEY,
    AgentFieldProblem,
    agent_values,
)
from vera.datasets._bundled import bundled_path, not_found_message
from vera.datasets._fields import MESSAGES_FIELD, FieldMap
from vera.datasets._formats import detect_format
from vera.datasets._readers import (
    RawRow,
    invalid_field,
    is_invalid_json,
    read_rows,
)
from vera.datasets._tables import (
    DATAFRAME_LABEL,
    HF_LABEL,
    dataframe_rows,
    is_dataframe,
    is_hf_dataset,
    plain_row,
)

CONVERSATION_KEYS = ("turns", "messages", "user_input")
_ROLES = {
    "user": Role.USER,
    "human": Role.USER,
    "assistant": Role.ASSISTANT,
    "ai": Role.ASSISTANT,
    "tool": Role.TOOL,
    "function": Role.TOOL,
    "system": Role.SYSTEM,
    "developer": Role.SYSTEM,
}
_CONTEXT_KEYS = ("contexts", "retrieval_context", "retrieved_contexts")
_LABEL_KEYS = ("human_faithful", "faithful")
_CONVERSATION_FIELDS = {"id", "category", "metadata", *CONVERSATION_KEYS}


class ConversationProblem(ValueError):
    """A conversation row is invalid: `field` names the place ("turns[3].role")."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


def is_message_list(rows: object) -> bool:
    """Whether in-memory rows are one conversation's messages (a list of dicts, each with a
    `role` and no sample field), rather than rows of samples."""
    if not isinstance(rows, list | tuple) or not rows:
        return False
    return all(
        isinstance(m, Mapping) and "role" in m and "response" not in m and "query" not in m
        for m in rows
    )


def is_conversation_row(row: object) -> bool:
    """Whether a row is a conversation: a `Conversation`, or a mapping whose messages key
    holds a list (RAGAS's single-turn `user_input` is a string, so it stays a sample)."""
    if isinstance(row, Conversation):
        return True
    if not isinstance(row, Mapping):
        return False
    return any(isinstance(row.get(key), list) for key in CONVERSATION_KEYS)


def mapped_messages(row: Any, fields: FieldMap | None) -> tuple[Any, str | None]:
    """`row` with the column `fields` maps to `messages` (`--field messages=chat`) read as its
    messages, and that column's name (None where nothing was mapped), to name it in errors."""
    if isinstance(row, Mapping):
        row = _renamed_agent_columns(row, fields or {})
    column = (fields or {}).get(MESSAGES_FIELD)
    if column is None or column == MESSAGES_FIELD or not isinstance(row, Mapping):
        return row, None
    if column not in row:
        return row, None
    rest = {key: value for key, value in row.items() if key != column}
    return {**rest, MESSAGES_FIELD: row[column]}, column


def _renamed_agent_columns(row: Mapping[str, Any], fields: FieldMap) -> Mapping[str, Any]:
    """`row` with the columns `fields` maps to agent fields (`expected_tool_calls=gold`)
    under the fields' own names."""
    moved = {f: c for f, c in fields.items() if f in AGENT_FIELDS and c != f and c in row}
    if not moved:
        return row
    rest = {key: value for key, value in row.items() if key not in moved.values()}
    return {**rest, **{field: row[column] for field, column in moved.items()}}


def in_column(field: str | None, column: str | None) -> str | None:
    """A problem's `field` ("messages[3].role") named by the column the user's rows hold the
    messages in ("chat[3].role")."""
    if field is None or column is None or not field.startswith(MESSAGES_FIELD):
        return field
    return column + field[len(MESSAGES_FIELD) :]


def conversation_from_row(row: Mapping[str, Any] | Conversation, default_id: str) -> Conversation:
    """A conversation row as a `Conversation`; a problem raises `ConversationProblem`."""
    if isinstance(row, Conversation):
        return row
    key = next(k for k in CONVERSATION_KEYS if isinstance(row.get(k), list))
    turns = _turns(row[key], key)
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ConversationProblem("metadata", "expected an object")
    extra = {k: v for k, v in row.items() if k not in _CONVERSATION_FIELDS}
    try:
        agent, used = agent_values(row)  # mapped columns are renamed by `mapped_messages`
    except AgentFieldProblem as exc:
        raise ConversationProblem(exc.field, exc.problem) from None
    extra = {**{k: v for k, v in extra.items() if k not in used}, **agent}
    try:
        return Conversation(
            id=str(row.get("id") or row.get("name") or default_id),
            turns=tuple(turns),
            category=row.get("category"),
            metadata={**extra, **metadata},
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or key
        raise ConversationProblem(field, error["msg"].lower()) from None


def _turns(messages: list[Any], key: str) -> list[Turn]:
    turns: list[Turn] = []
    calls: dict[str, str] = {}
    for i, message in enumerate(messages):
        where = f"{key}[{i}]"
        if not isinstance(message, Mapping):
            raise ConversationProblem(where, f"expected a message object, got {_kind(message)}")
        turn = _turn(message, where, calls, turns)
        for call in turn.tool_calls:
            if call.id:
                calls[call.id] = call.name
        turns.append(turn)
    if any(turn.tool_calls for turn in turns):
        _check_answers(turns, key)
    return turns


def _check_answers(turns: list[Turn], key: str) -> None:
    """In a conversation that records its tool calls, each tool result answers one made
    before it: by its call id, or (RAGAS, no ids) one of the last assistant message's calls
    still unanswered. A result of a call never made is no evidence, so it is refused rather
    than verified against. (Where no message records a call, as in rows of tool results
    alone, there is nothing to check a result against.)"""
    made: set[str] = set()
    unanswered = 0  # of the last assistant message's calls, for results without an id
    for i, turn in enumerate(turns):
        if turn.role is Role.ASSISTANT:
            made.update(call.id for call in turn.tool_calls if call.id)
            unanswered = len(turn.tool_calls)
        elif turn.role is not Role.TOOL:
            unanswered = 0
        elif turn.call_id is not None and turn.call_id not in made:
            raise ConversationProblem(
                f"{key}[{i}].tool_call_id",
                f"answers call {turn.call_id!r}, which no earlier assistant message made (no "
                "tool_calls entry before it has that id); fix the id, or remove the message",
            )
        elif turn.call_id is None and unanswered == 0:
            raise ConversationProblem(
                f"{key}[{i}]",
                "a tool result that answers no call: every call of the assistant message "
                "before it is answered already; add its call, or remove the message",
            )
        else:
            unanswered = max(unanswered - 1, 0)


def _turn(
    message: Mapping[str, Any], where: str, calls: Mapping[str, str], earlier: Sequence[Turn]
) -> Turn:
    role = _role(message, where)
    called = _tools_called(message.get("tools_called"), where)
    call_id = message.get("tool_call_id") or message.get("call_id")
    name = message.get("name") or message.get("tool_name")
    if role is Role.TOOL and not name:
        name = calls.get(str(call_id)) if call_id else _positional_tool(earlier)
    if message.get("content") is None and not (
        role is Role.ASSISTANT and message.get("tool_calls")
    ):
        raise ConversationProblem(f"{where}.content", _NO_CONTENT[role])
    try:
        return Turn(
            role=role,
            content=_content(message.get("content"), f"{where}.content"),
            contexts=_contexts(message, where),
            tool_results=tuple(called[1]),
            tool_calls=tuple(_tool_calls(message.get("tool_calls"), where)) + called[0],
            tool_name=str(name) if name else None,
            call_id=str(call_id) if call_id else None,
            human_faithful=_label(message, where),
            metadata=_metadata(message.get("metadata"), f"{where}.metadata"),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(p) for p in error["loc"])
        raise ConversationProblem(f"{where}.{loc}", error["msg"].lower()) from None


_NO_CONTENT = {
    Role.USER: "missing; a user message needs the text it said",
    Role.ASSISTANT: "missing; an assistant message needs its text, or the tool_calls it made",
    Role.TOOL: "missing; a tool message needs the result it returned",
    Role.SYSTEM: "missing; a system message needs its text",
}


def _role(message: Mapping[str, Any], where: str) -> Role:
    # RAGAS names the role `type`: an error names the key the row has.
    key = "type" if "role" not in message and "type" in message else "role"
    raw = message.get(key)
    if raw is None:
        raise ConversationProblem(f"{where}.role", "missing; expected user, assistant or tool")
    role = _ROLES.get(str(raw).lower())
    if role is None:
        known = ", ".join(sorted(_ROLES))
        raise ConversationProblem(
            f"{where}.{key}", f"unknown role {raw!r}; expected one of {known}"
        )
    return role


def _content(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        # OpenAI content parts: the text parts are what the turn says.
        texts = [p.get("text", "") for p in value if isinstance(p, Mapping)]
        return "\n".join(t for t in texts if isinstance(t, str))
    raise ConversationProblem(where, f"expected text, got {_kind(value)}")


def _contexts(message: Mapping[str, Any], where: str) -> tuple[Context, ...]:
    for key in _CONTEXT_KEYS:
        value = message.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise ConversationProblem(f"{where}.{key}", f"expected a list, got {_kind(value)}")
        return tuple(_context(v, f"{where}.{key}[{j}]") for j, v in enumerate(value))
    return ()


def _context(value: Any, where: str) -> Context:
    if isinstance(value, str):
        return Context(text=value)
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        try:
            return Context.model_validate(dict(value))
        except ValidationError as exc:
            raise ConversationProblem(where, exc.errors()[0]["msg"].lower()) from None
    raise ConversationProblem(where, f"expected text or an object with 'text', got {_kind(value)}")


def _tool_calls(value: Any, where: str) -> Iterator[ToolCall]:
    if value is None:
        return
    if not isinstance(value, list):
        raise ConversationProblem(f"{where}.tool_calls", f"expected a list, got {_kind(value)}")
    for j, call in enumerate(value):
        place = f"{where}.tool_calls[{j}]"
        if not isinstance(call, Mapping):
            raise ConversationProblem(place, f"expected an object, got {_kind(call)}")
        # OpenAI nests the name and arguments under `function`; RAGAS has `name` and `args`.
        nested = call.get("function")
        function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else call
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ConversationProblem(f"{place}.name", "missing; a tool call needs its name")
        args = function.get("arguments", function.get("args", ""))
        arguments = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
        call_id = call.get("id")
        yield ToolCall(name=name, id=str(call_id) if call_id else None, arguments=arguments)


def _tools_called(value: Any, where: str) -> tuple[tuple[ToolCall, ...], list[ToolResult]]:
    """DeepEval's `tools_called`: each call with its output, on the assistant turn itself."""
    if value is None:
        return (), []
    if not isinstance(value, list):
        raise ConversationProblem(f"{where}.tools_called", f"expected a list, got {_kind(value)}")
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for j, tool in enumerate(value):
        place = f"{where}.tools_called[{j}]"
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            raise ConversationProblem(f"{place}.name", "missing; a tool call needs its name")
        params = tool.get("input_parameters") or {}
        calls.append(ToolCall(name=tool["name"], arguments=json.dumps(params, sort_keys=True)))
        output = tool.get("output")
        if output is not None:
            text = output if isinstance(output, str) else json.dumps(output, sort_keys=True)
            results.append(ToolResult(text=text, tool_name=tool["name"]))
    return tuple(calls), results


def _positional_tool(earlier: Sequence[Turn]) -> str | None:
    """RAGAS's tool messages name no call: they answer the last assistant's calls in order."""
    answered = 0
    for turn in reversed(earlier):
        if turn.role is Role.TOOL:
            answered += 1
        elif turn.role is Role.ASSISTANT:
            calls = turn.tool_calls
            return calls[answered].name if answered < len(calls) else None
        else:
            return None
    return None


def _label(message: Mapping[str, Any], where: str) -> bool | None:
    for key in _LABEL_KEYS:
        value = message.get(key)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise ConversationProblem(f"{where}.{key}", f"expected true or false, got {value!r}")
        return value
    return None


def _metadata(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConversationProblem(where, f"expected an object, got {_kind(value)}")
    return dict(value)


def _kind(value: object) -> str:
    return type(value).__name__


def read_conversations(data: object, *, fields: FieldMap | None = None) -> list[Conversation]:
    """Conversations from a JSON/JSONL file or bundled name, a `Conversation`, one list of
    message dicts, a pandas DataFrame or Hugging Face dataset with a column of message lists
    (`messages`, `turns` or `user_input`), or an iterable of conversations and conversation
    rows. A row that is no
    conversation, or an invalid one, raises `DatasetRowError` naming its place and field."""
    if isinstance(data, Conversation):
        return [data]
    label, rows = _rows_of(data)
    found: list[Conversation] = []
    for index, raw in enumerate(rows, start=1):
        unreadable = is_invalid_json(raw.data)
        if unreadable is not None:
            raise DatasetRowError(label, raw.location, invalid_field(raw.data), unreadable)
        row, column = mapped_messages(raw.data, fields)
        if not is_conversation_row(row):
            keys = ", ".join(f"'{k}'" for k in CONVERSATION_KEYS)
            problem = f"not a conversation: expected {keys} holding a list of messages"
            raise DatasetRowError(label, raw.location, None, problem + _map_hint(row))
        try:
            found.append(conversation_from_row(row, f"conversation-{index}"))
        except ConversationProblem as exc:
            where = in_column(exc.field, column)
            raise DatasetRowError(label, raw.location, where, exc.problem) from None
    return found


def message_column(row: object) -> str | None:
    """The first column of a row that holds a list of messages under a name VERA does not
    read as a conversation's (a `chat` column of `{"role", "content"}` dicts)."""
    if not isinstance(row, Mapping):
        return None
    return next(
        (str(k) for k, v in row.items() if k not in CONVERSATION_KEYS and is_message_list(v)),
        None,
    )


def _map_hint(row: object) -> str:
    column = message_column(row)
    if column is None:
        return ""
    return f"; column '{column}' holds a list of messages: rename it '{MESSAGES_FIELD}'"


def _rows_of(data: object) -> tuple[str, Iterable[RawRow]]:
    if isinstance(data, str | Path):
        path = Path(data)
        if not path.exists():
            path = bundled_path(str(data)) or path
        if not path.exists():
            raise DatasetError(not_found_message(data))
        return str(path), read_rows(path, detect_format(path, None))
    if is_message_list(data):
        return "<rows>", [RawRow("row 1", {"messages": list(data)})]  # type: ignore[call-overload]
    if is_dataframe(data):  # iterated as is, a DataFrame gives its column names
        return DATAFRAME_LABEL, _numbered_rows(dataframe_rows(data))
    if is_hf_dataset(data):
        return HF_LABEL, _numbered_rows(plain_row(row) for row in data)  # type: ignore[attr-defined]
    if isinstance(data, Iterable) and not isinstance(data, bytes | Mapping):
        return "<rows>", (RawRow(f"row {i}", r) for i, r in enumerate(data, start=1))
    raise ConfigError(f"cannot read conversations from {type(data).__name__}")


def _numbered_rows(rows: Iterable[Any]) -> Iterator[RawRow]:
    return (RawRow(f"row {i}", row) for i, row in enumerate(rows, start=1))


# ---- each assistant turn as a sample ------------------------------------------------------


def turn_samples(
    conversation: Conversation, *, user_facts: bool = True, agent_steps: bool = False
) -> list[Sample]:
    """One `Sample` per assistant turn with something to verify, in order.

    Its contexts, each tagged with its `SourceKind`: the turn's own retrieved contexts and
    tool results, earlier turns' ones, what the user said so far (left out with
    `user_facts=False`, so a claim resting only on the user's word has no evidence). The
    assistant's own earlier words are no evidence (see `consistency_samples`). Sentences
    that repeat an earlier assistant turn word for word are not verified again: they leave
    the response and are listed in `metadata["repeated"]` (their verdict is the earlier
    turn's). A turn that only repeats yields no sample. An intermediate assistant message of an
    agent trace (`metadata["intermediate"]`) is verified only with `agent_steps=True`; else it
    is passed over, and the tool results it saw count for the next answer.
    """
    state = _Thread(conversation, user_facts=user_facts, agent_steps=agent_steps)
    found = [s for s in (state.step(i, turn) for i, turn in enumerate(conversation.turns)) if s]
    if found and (_made_calls(conversation) or set(AGENT_FIELDS) & conversation.metadata.keys()):
        # The agent metrics score a conversation's calls once: on its last answer.
        last = found[-1]
        calls = {MADE_CALLS_KEY: _made_calls(conversation)}
        found[-1] = last.model_copy(update={"metadata": {**last.metadata, **calls}})
    # An LLM judge verifies a group's turns in one call (vera.judges._turns).
    return group_turns(found, f"{conversation.id}/turns")


def _made_calls(conversation: Conversation) -> list[dict[str, Any]]:
    """The tool calls the conversation's assistant made, in order, as the agent fields hold
    them; where no message records a call (rows of tool results alone; an OTLP trace's tool
    spans give calls, `vera.datasets._otlp_tools`), each tool result's tool, its arguments
    unknown."""
    turns = conversation.turns
    calls = [c for t in turns if t.role is Role.ASSISTANT for c in t.tool_calls]
    if calls:
        return [{"name": c.name, "arguments": _json_object(c.arguments)} for c in calls]
    return [
        {"name": t.tool_name, "arguments": None}
        for t in turns
        if t.role is Role.TOOL and t.tool_name
    ]


def _json_object(text: str) -> dict[str, Any] | None:
    """A call's arguments as an object; None where the model wrote no JSON object."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def consistency_samples(
    conversation: Conversation, *, user_facts: bool = True, agent_steps: bool = False
) -> list[Sample]:
    """Each turn sample again, its contexts the assistant's own earlier turns only (tagged
    `SourceKind.ASSISTANT`): a claim the judge finds CONTRADICTED here contradicts what the
    assistant said before. Turns with no earlier assistant turn have nothing to check."""
    samples = turn_samples(conversation, user_facts=user_facts, agent_steps=agent_steps)
    return consistency_checks(samples)


_CHECK_KEY = "consistency_check"
"""The metadata key marking a consistency check, so a run over checks checks them no more."""


def consistency_checks(samples: Iterable[Sample]) -> list[Sample]:
    """`consistency_samples` of turn samples, as a run over a conversation dataset has them
    (`vera eval -d conversations` checks consistency from its own samples): each
    conversation's turns in turn order, each after the first with the earlier turns' text
    (the sentences they repeated included) as its only contexts. Samples that are no
    conversation turn, or are checks already, are left out."""
    by_conversation: dict[str, list[Sample]] = {}
    for sample in samples:
        meta = sample.metadata
        if meta.get(_CHECK_KEY) or not isinstance(meta.get("turn"), int):
            continue
        if "conversation_id" in meta:
            by_conversation.setdefault(str(meta["conversation_id"]), []).append(sample)
    out: list[Sample] = []
    for conversation, turns in by_conversation.items():
        said: list[tuple[int, str]] = []
        checks = []
        for sample in sorted(turns, key=lambda s: int(s.metadata["turn"])):
            if said:
                contexts = tuple(_tagged(text, SourceKind.ASSISTANT, i) for i, text in said)
                update = {
                    "contexts": contexts,
                    "human_faithful": None,
                    "metadata": {**sample.metadata, _CHECK_KEY: True},
                }
                checks.append(sample.model_copy(update=update))
            text = " ".join([sample.response or "", *sample.metadata.get("repeated", ())])
            said.append((int(sample.metadata["turn"]) - 1, text.strip()))
        out += group_turns(checks, f"{conversation}/consistency")
    return out


class _Thread:
    """What the conversation has said up to a turn, as tagged contexts."""

    def __init__(self, conversation: Conversation, *, user_facts: bool, agent_steps: bool) -> None:
        self.conversation = conversation
        self.user_facts = user_facts
        self.agent_steps = agent_steps
        self.pending_tools: list[tuple[int, ToolResult]] = []
        self.earlier: list[Context] = []
        self.user: list[Context] = []
        self.said: set[str] = set()
        self.query = ""
        self.position = 0

    def step(self, index: int, turn: Turn) -> Sample | None:
        if turn.role is Role.USER:
            self.query = turn.content
            self.user.append(_tagged(turn.content, SourceKind.USER, index))
        elif turn.role is Role.TOOL:
            result = ToolResult(text=turn.content, tool_name=turn.tool_name, call_id=turn.call_id)
            self.pending_tools.append((index, result))
        elif turn.role is Role.ASSISTANT and not _passed_over(turn, self.agent_steps):
            return self._assistant(index, turn)
        return None

    def _assistant(self, index: int, turn: Turn) -> Sample | None:
        tools = [*self.pending_tools, *((index, r) for r in turn.tool_results)]
        own = [_tagged(c.text, SourceKind.RETRIEVED, index, c) for c in turn.contexts]
        own += [_tool_context(r, SourceKind.TOOL, i) for i, r in tools]
        sample = self._sample(index, turn, own) if turn.content.strip() else None
        self.pending_tools = []
        self.earlier += [_tagged(c.text, SourceKind.EARLIER_TURN, index, c) for c in turn.contexts]
        self.earlier += [_tool_context(r, SourceKind.EARLIER_TURN, i) for i, r in tools]
        if turn.content.strip():
            self.said.update(_key(s) for s in _sentences(turn.content))
        return sample

    def _sample(self, index: int, turn: Turn, own: list[Context]) -> Sample | None:
        self.position += 1
        sentences = _sentences(turn.content)
        repeated = [s for s in sentences if _key(s) in self.said]
        fresh = [s for s in sentences if _key(s) not in self.said]
        if not fresh:
            return None
        user = self.user if self.user_facts else []
        conversation = self.conversation
        return Sample(
            id=f"{conversation.id}/turn-{index + 1}",
            query=self.query,
            response=" ".join(fresh) if repeated else turn.content,
            contexts=(*own, *self.earlier, *user),
            category=conversation.category,
            human_faithful=turn.human_faithful,
            metadata={
                **conversation.metadata,
                **turn.metadata,
                "conversation_id": conversation.id,
                "turn": index + 1,
                "assistant_turn": self.position,
                "repeated": repeated,
            },
        )


def _tagged(text: str, kind: SourceKind, index: int, context: Context | None = None) -> Context:
    base = dict(context.metadata) if context else {}
    original = context.source if context else None
    if original is not None:
        base["document_source"] = original
    return Context(
        text=text,
        id=context.id if context else None,
        source=_source_label(kind, index, original),
        metadata={**base, SOURCE_KIND_KEY: kind.value, "turn": index + 1},
    )


def _source_label(kind: SourceKind, index: int, name: str | None) -> str:
    """A context's `source` as every report shows it: its kind, name and turn, so a verdict
    that cites it says where its support came from ("tool get_order, turn 4")."""
    named = f"{kind.value} {name}" if name else kind.value
    return f"{named}, turn {index + 1}"


def _tool_context(result: ToolResult, kind: SourceKind, index: int) -> Context:
    metadata: dict[str, Any] = {SOURCE_KIND_KEY: kind.value, "turn": index + 1}
    if result.tool_name:
        metadata["tool_name"] = result.tool_name
    if result.call_id:
        metadata["call_id"] = result.call_id
    return Context(
        text=result.text, source=_source_label(kind, index, result.tool_name), metadata=metadata
    )


def _sentences(text: str) -> list[str]:
    return [text[u.start : u.end] for u in split_units(text)]


_SPACE = re.compile(r"\s+")


def _key(sentence: str) -> str:
    return _SPACE.sub(" ", sentence.strip().lower())


def _passed_over(turn: Turn, agent_steps: bool) -> bool:
    """An agent's intermediate message, when only final answers are verified."""
    return not agent_steps and bool(turn.metadata.get(INTERMEDIATE_KEY))
