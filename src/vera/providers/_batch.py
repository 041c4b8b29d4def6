"""Provider batch APIs behind the `ChatModel` protocol: `BatchingChatModel`.

With `batch = true` each provider model is `ManagedChatModel(BatchingChatModel(adapter))`, so
the response cache, the budget, redaction and the dry run work as they do for interactive
calls. The batching layer gathers the requests in flight (the samples of a run run
concurrently), submits them as one provider batch once no new request came for `window`
seconds (or `max_size` are waiting), polls the batch every `poll` seconds, and resolves each
request from the batch's results. Work that needs a reply before its next call (claims before
verdicts) so goes in waves, and the requests of many samples share a batch.

Every request's id in a batch is its response-cache key, a hash of everything that can change
the reply. A batch is paid for at most once: before a batch is created, a `BatchJournal` (the
run history, `vera._store`) records the intent (the batch's request hash and its request ids),
and the hash goes into the batch's metadata; once the provider accepted it, the batch's id is
recorded too. A resumed run polls the batches of the killed one and takes their results, and
an intent without a batch id (killed between create and record, or the record refused by a
full disk) is reconciled with the provider's list of batches by that hash, so a batch created
but never recorded is found and awaited, not submitted again. A journal that cannot record the
intent stops the run before anything is paid for.

A batch's output is read line by line: a line that is not JSON, has no `custom_id`, or does
not have the API's shape costs only its own request (sent again), never the batch; for an id
answered twice, the first good line wins.

A request a batch did not answer (the batch expired or was cancelled, or the request failed
in a way that may pass) raises `RetryableProviderError`: the managed model's retries send it
again in a later batch; with `retry="direct"` it is sent at once through the interactive API.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, Protocol, TypeVar

from vera._json import JsonRefused, loads_bounded
from vera._types._errors import ConfigError
from vera.providers._base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    ProviderError,
    RetryableProviderError,
)
from vera.providers._cache import cache_key

BATCH_PROVIDERS = ("openai", "anthropic")
"""The providers whose batch API VERA speaks."""


BATCH_WAIT = 25 * 3600.0
"""Seconds a request may wait for its batch: the providers' 24-hour window, and some slack."""

MAX_BATCH_BYTES = 100_000_000
"""A batch is submitted before its requests' text passes this many bytes: OpenAI takes an
input file of at most 200 MB, Anthropic a batch of at most 256 MB, and the JSON around the
text (schemas, escapes) adds to it."""

INTENT_PREFIX = "intent-"
"""A journal record whose `batch_id` starts so is an intent: a batch about to be created (status
"intent"), created and recorded ("created"), or looked for on resume ("reconciled")."""

RECONCILE_SLACK = 600.0
"""Seconds a provider's clock (a batch's `created_at`) may be behind ours when an intent is
reconciled: a batch created this long before its intent is not taken for it."""

POLL_ATTEMPTS = 10
"""Looks at a submitted batch that may fail in a row (a 5xx, a dropped connection) before
its requests fail too."""

BatchRetry = Literal["batch", "direct"]
_T = TypeVar("_T")


@dataclass(frozen=True)
class BatchStatus:
    """A batch as the provider reports it: its status word, whether it ended, and counts."""

    status: str
    ended: bool
    succeeded: int = 0
    failed: int = 0
    total: int = 0


@dataclass(frozen=True)
class Unanswered:
    """A request its batch ended without answering (expired, cancelled, or never run)."""

    reason: str


Outcome = Any
"""One request's raw result from a batch, as its backend reads it (`BatchBackend.response`
turns it into a reply or an error), or `Unanswered`."""


@dataclass
class BatchResults:
    """What an ended batch answered, read line by line: each request's raw result by request
    id (an unreadable line for a known id is `Unanswered`, so that request alone is sent
    again), and what was wrong with each unreadable line."""

    batch_id: str
    found: dict[str, Outcome] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _good: set[str] = field(default_factory=set, repr=False)

    def add(self, key: str, outcome: Outcome, good: bool) -> None:
        """A readable line: the first good line of an id wins, a later one never replaces
        it; a good line replaces an earlier error or unreadable one."""
        if key in self._good or (key in self.found and not good):
            return
        self.found[key] = outcome
        if good:
            self._good.add(key)

    def unreadable(self, number: int, why: str, key: str | None = None) -> None:
        """Line `number` (1-based) could not be used; `key` where the line named its id."""
        where = f"line {number}" + (f" (custom_id {key[:16]}…)" if key else "")
        self.problems.append(f"{where}: {why}")
        if key is not None and key not in self.found:
            self.found[key] = Unanswered(
                f"its result line in batch {self.batch_id} is unreadable ({why})"
            )


def read_result_line(raw: str) -> dict[str, Any] | str:
    """One line of a batch's results as a JSON object with a string `custom_id`, or why it is
    not one (never an exception), read through VERA's guarded JSON reader (NaN, Infinity,
    duplicate keys and nesting too deep are refused, said rather than raised)."""
    try:
        line = loads_bounded(raw)
    except JsonRefused as exc:
        return str(exc)
    except ValueError as exc:
        return f"not JSON ({exc})"
    if not isinstance(line, dict):
        return f"a JSON {type(line).__name__}, not an object"
    if not isinstance(line.get("custom_id"), str) or not line["custom_id"]:
        return "no custom_id"
    return line


def request_hash(keys: Sequence[str]) -> str:
    """The hash of a batch's request ids, recorded before it is created and kept in its
    metadata, by which a resumed run finds it at the provider."""
    return hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:32]


class BatchBackend(Protocol):
    """One provider's batch API, through its official SDK."""

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], tag: str) -> str:
        """Create a batch of (id, request), `tag` (its `request_hash`) in its metadata where
        the API keeps metadata, and return its id."""
        ...

    async def find(self, tag: str, since: float, count: int) -> list[str]:
        """The ids of the batches created at or after `since` (epoch seconds) that may be the
        one created for `tag` with `count` requests: those whose metadata holds `tag`, or,
        where the API keeps no metadata, every batch of `count` requests."""
        ...

    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state now."""
        ...

    async def results(self, batch_id: str) -> BatchResults:
        """The raw result of each request of an ended batch, by request id."""
        ...

    def response(self, request: ChatRequest, outcome: Outcome) -> ChatResponse:
        """`outcome` as VERA's reply, or the `ProviderError` it stands for."""
        ...

    def succeeded(self, outcome: Outcome) -> bool:
        """Whether `outcome` is a reply (not an error line)."""
        ...


@dataclass(frozen=True)
class BatchRecord:
    """One submitted batch as the run history keeps it."""

    batch_id: str
    provider: str
    model: str
    status: str
    keys: tuple[str, ...]
    """The request ids (response-cache keys) it holds."""
    succeeded: int = 0
    failed: int = 0
    created: float = field(default_factory=time.time)


class BatchJournal(Protocol):
    """Where a run records its batches as soon as they exist (the run history)."""

    def recorded(self) -> list[BatchRecord]:
        """The batches this run submitted so far, oldest first."""
        ...

    def save(self, record: BatchRecord) -> None:
        """Add a batch, or update its status and counts (its keys are kept as first saved)."""
        ...

    def progress(self, line: str) -> None:
        """A batch changed state: one line for whoever watches the run."""
        ...


_JOURNAL: ContextVar[BatchJournal | None] = ContextVar("vera_batch_journal", default=None)


@contextmanager
def batch_journal(journal: BatchJournal) -> Iterator[None]:
    """Inside this block, every batching model records its batches in `journal`, and takes
    the results of the batches recorded there before (a resumed run) instead of resubmitting."""
    token = _JOURNAL.set(journal)
    try:
        yield
    finally:
        _JOURNAL.reset(token)


def describe_batches(records: Sequence[BatchRecord]) -> list[str]:
    """What `vera runs show` says of a run's batches: a count by state, then one line each."""
    # An intent is told only while its batch is unconfirmed; once created, the batch is.
    records = [
        r for r in records if not r.batch_id.startswith(INTENT_PREFIX) or r.status == "intent"
    ]
    if not records:
        return []
    states: dict[str, int] = {}
    for record in records:
        status = "unconfirmed" if record.batch_id.startswith(INTENT_PREFIX) else record.status
        states[status] = states.get(status, 0) + 1
    counts = ", ".join(f"{n} {status}" for status, n in states.items())
    lines = [f"Batches: {len(records)} ({counts})"]
    for r in records:
        if r.batch_id.startswith(INTENT_PREFIX):
            lines.append(
                f"  (no id yet) · {r.provider}:{r.model} · unconfirmed · {len(r.keys)} requests · "
                "created or not: --resume looks for it at the provider"
            )
            continue
        lines.append(
            f"  {r.batch_id} · {r.provider}:{r.model} · {r.status} · {len(r.keys)} requests · "
            f"{r.succeeded} succeeded, {r.failed} failed"
        )
    return lines


def check_batch_provider(spec: str) -> None:
    """Refuse (exit 2) `--batch` for a model whose provider has no batch API VERA speaks."""
    provider = spec.strip().partition(":")[0].strip().lower()
    if provider not in BATCH_PROVIDERS:
        raise ConfigError(
            f"--batch (batch = true) needs a provider with a batch API, and {spec!r} is "
            f"{provider!r}: use {' or '.join(BATCH_PROVIDERS)} (e.g. openai:gpt-4o-mini), "
            "or drop --batch"
        )


def batch_backend(model: ChatModel) -> BatchBackend:
    """The batch API of an adapter built by `vera.providers._registry`."""
    from vera.providers._anthropic import AnthropicChatModel
    from vera.providers._openai import OpenAIChatModel

    if isinstance(model, OpenAIChatModel):
        from vera.providers._openai_batch import OpenAIBatchBackend

        return OpenAIBatchBackend(model)
    if isinstance(model, AnthropicChatModel):
        from vera.providers._anthropic_batch import AnthropicBatchBackend

        return AnthropicBatchBackend(model)
    check_batch_provider(f"{model.provider}:{model.model}")
    raise ConfigError(f"--batch: {type(model).__name__} has no batch API")


@dataclass
class _Waiting:
    request: ChatRequest
    future: asyncio.Future[Outcome]


class BatchingChatModel:
    """A `ChatModel` that sends what it is asked through a provider's batch API."""

    def __init__(
        self,
        inner: ChatModel,
        backend: BatchBackend | None = None,
        *,
        window: float = 2.0,
        max_size: int = 10_000,
        poll: float = 30.0,
        retry: BatchRetry = "batch",
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if window <= 0 or poll <= 0 or max_size < 1:
            raise ValueError("window and poll must be positive, max_size at least 1")
        self.inner = inner
        self.backend = backend or batch_backend(inner)
        self.window, self.max_size, self.poll, self.retry = window, max_size, poll, retry
        self._sleep = sleep
        self._pending: dict[str, _Waiting] = {}
        self._pending_bytes = 0
        self._in_flight: dict[str, asyncio.Future[Outcome]] = {}
        self._gatherer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._journal: BatchJournal | None = None
        self._recorded: dict[str, list[str]] = {}
        self._intents: dict[str, BatchRecord] = {}
        self._collected: dict[str, asyncio.Task[Any]] = {}
        self.submitted: list[str] = []
        """The ids of the batches this model created, in order."""

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The reply to `request` from a batch: a recorded one's where it has it, else the
        next one this model submits."""
        key = cache_key(self.provider, self.model, request)
        outcome = await self._from_recorded(key)
        if outcome is None:
            # Shielded: one caller's timeout must not cancel a reply others wait for too.
            outcome = await asyncio.shield(self._enqueue(key, request))
        if isinstance(outcome, Unanswered):
            if self.retry == "direct":
                return await self.inner.complete(request)
            raise RetryableProviderError(
                f"{self.provider}:{self.model}: {outcome.reason}; the request is sent again "
                "in a later batch"
            )
        return self.backend.response(request, outcome)

    # -- gathering and submitting --------------------------------------------------------

    def _enqueue(self, key: str, request: ChatRequest) -> asyncio.Future[Outcome]:
        running = self._in_flight.get(key)
        if running is not None and not running.done():
            return running  # the same request twice at once: one batch line answers both
        size = _size(request)
        if self._pending and self._pending_bytes + size > MAX_BATCH_BYTES:
            self._submit_pending()  # this request would take the batch past the limit
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._pending[key] = _Waiting(request, future)
        self._in_flight[key] = future
        self._pending_bytes += size
        if len(self._pending) >= self.max_size:
            self._submit_pending()
        elif self._gatherer is None:
            self._gatherer = self._spawn(self._gather())
        return future

    async def _gather(self) -> None:
        """Wait until no request came for `window` seconds (a wave is complete), then submit."""
        started = time.monotonic()
        while True:
            seen = len(self._pending)
            await self._sleep(self.window)
            quiet = len(self._pending) == seen
            if not self._pending or quiet or time.monotonic() - started > 10 * self.window:
                break
        self._gatherer = None
        if self._pending:
            self._submit_pending()

    def _submit_pending(self) -> None:
        items, self._pending = self._pending, {}
        self._pending_bytes = 0
        if self._gatherer is not None:
            self._gatherer.cancel()
            self._gatherer = None
        self._spawn(self._run_batch(items))

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run_batch(self, items: dict[str, _Waiting]) -> None:
        try:
            await self._answer_batch(items)
        finally:
            # Answered requests leave memory: a run of any size holds only those in flight.
            for key, waiting in items.items():
                if self._in_flight.get(key) is waiting.future:
                    del self._in_flight[key]

    async def _answer_batch(self, items: dict[str, _Waiting]) -> None:
        keys = tuple(items)
        try:
            batch_id = await self._create(keys, items)
            outcomes = await self._wait(batch_id, keys)
        except asyncio.CancelledError:
            for waiting in items.values():
                if not waiting.future.done():
                    waiting.future.cancel()
            return
        except Exception as error:
            # Every failure goes to the requests that wait for it (a provider error, a full
            # history: `StoreWriteError` stops the run), never to a task nobody awaits.
            for waiting in items.values():
                if not waiting.future.done():
                    waiting.future.set_exception(error)
            return
        for key, waiting in items.items():
            if not waiting.future.done():
                waiting.future.set_result(_outcome(outcomes, key, batch_id))

    async def _create(self, keys: tuple[str, ...], items: dict[str, _Waiting]) -> str:
        """Record the intent, create the batch, record its id: a kill or a refused write
        between the two records leaves an intent that a resumed run reconciles."""
        tag = request_hash(keys)
        intent = f"{INTENT_PREFIX}{tag}-{time.time_ns()}"
        self._save(intent, "intent", keys)  # raises before anything is paid for
        batch_id = await self.backend.submit([(k, w.request) for k, w in items.items()], tag)
        self.submitted.append(batch_id)
        self._save(batch_id, "submitted", keys)
        self._save(intent, "created", keys)
        self._say(f"batch {batch_id}: {len(items)} request(s) submitted")
        return batch_id

    # -- polling ----------------------------------------------------------------------------

    async def _wait(self, batch_id: str, keys: tuple[str, ...]) -> dict[str, Outcome]:
        """Poll until the batch ends, recording each change of state; then its results."""
        last = ""
        while True:
            state = await self._patiently(lambda: self.backend.status(batch_id))
            if state.status != last:
                last = state.status
                self._save(batch_id, state.status, keys, state)
                self._say(
                    f"batch {batch_id}: {state.status} ({state.succeeded + state.failed}/"
                    f"{state.total or len(keys)} done)"
                )
            if state.ended:
                results = await self._patiently(lambda: self.backend.results(batch_id))
                if results.problems:
                    shown = "; ".join(results.problems[:3])
                    more = len(results.problems) - 3
                    self._say(
                        f"batch {batch_id}: {len(results.problems)} unreadable result line(s), "
                        f"their requests are sent again: {shown}"
                        + (f"; and {more} more" if more > 0 else "")
                    )
                return results.found
            await self._sleep(self.poll)

    async def _patiently(self, look: Callable[[], Awaitable[_T]]) -> _T:
        """`look()` at a submitted batch, again after a failure that may pass: giving up on
        a batch the provider still runs would send (and pay for) its requests twice."""
        for attempt in range(POLL_ATTEMPTS):
            try:
                return await look()
            except RetryableProviderError:
                if attempt + 1 == POLL_ATTEMPTS:
                    raise
                await self._sleep(self.poll)
        raise AssertionError("unreachable")

    # -- the batches of an earlier, interrupted run ------------------------------------------

    async def _from_recorded(self, key: str) -> Outcome | None:
        """`key`'s result from a batch recorded before this process (a killed run being
        resumed), waiting for that batch where it is still running; None when no recorded
        batch answered it. An intent recorded without its batch is first looked for at the
        provider (`_reconcile`)."""
        self._load_journal()
        for source in reversed(self._recorded.get(key, [])):
            if source.startswith(INTENT_PREFIX):
                batch_ids: list[str] = await self._memo(source, partial(self._reconcile, source))
            else:
                batch_ids = [source]
            for batch_id in batch_ids:
                try:
                    outcomes: dict[str, Outcome] = await self._memo(
                        batch_id, partial(self._wait, batch_id, ())
                    )
                except ProviderError:
                    continue  # the batch is gone at the provider: send the request anew
                found = outcomes.get(key)
                # An error line is no reply to reuse: the request is sent anew.
                if found is not None and self.backend.succeeded(found):
                    return found
        return None

    async def _memo(self, name: str, work: Callable[[], Awaitable[_T]]) -> _T:
        """`work()` run once for `name` however many requests wait for it."""
        task = self._collected.get(name)
        if task is None:
            task = self._spawn(work())
            self._collected[name] = task
        return await asyncio.shield(task)

    async def _reconcile(self, intent: str) -> list[str]:
        """The batches the provider holds for an intent whose batch id was never recorded
        (the run was killed, or its history refused the write, between creating the batch
        and recording it): found by the request hash in their metadata, recorded now, and
        awaited like any recorded batch. None found: the batch was never created."""
        record = self._intents[intent]
        tag = intent[len(INTENT_PREFIX) :].rsplit("-", 1)[0]
        since = record.created - RECONCILE_SLACK
        try:
            found = await self._patiently(lambda: self.backend.find(tag, since, len(record.keys)))
        except ProviderError as exc:
            # Waiting forever on a list that cannot be read helps no one: say what may be paid
            # twice, and where to look, then send the requests anew.
            self._say(
                f"could not list the provider's batches to find the one of request hash {tag} "
                f"({exc}); its {len(record.keys)} request(s) are sent again: if that batch "
                "exists, cancel it in the provider's console"
            )
            found = []
        known = {b for ids in self._recorded.values() for b in ids}
        found = [b for b in found if b not in known]
        for batch_id in found:
            self._save(batch_id, "submitted", record.keys)
            self._say(
                f"batch {batch_id}: created before the run stopped but not recorded; found "
                f"by its request hash {tag}, its {len(record.keys)} request(s) awaited"
            )
        self._save(intent, "reconciled", record.keys)
        return found

    def _load_journal(self) -> None:
        journal = _JOURNAL.get()
        if journal is self._journal:
            return
        self._journal = journal
        self._recorded = {}
        self._intents = {}
        self._collected = {}
        if journal is None:
            return
        for record in journal.recorded():
            if record.provider != self.provider or record.model != self.model:
                continue
            if record.batch_id.startswith(INTENT_PREFIX):
                if record.status != "intent":
                    continue  # its batch is recorded under its own id
                self._intents[record.batch_id] = record
            for key in record.keys:
                self._recorded.setdefault(key, []).append(record.batch_id)

    def _save(
        self, batch_id: str, status: str, keys: tuple[str, ...], state: BatchStatus | None = None
    ) -> None:
        journal = _JOURNAL.get()
        if journal is None:
            return
        journal.save(
            BatchRecord(
                batch_id=batch_id,
                provider=self.provider,
                model=self.model,
                status=status,
                keys=keys,
                succeeded=state.succeeded if state else 0,
                failed=state.failed if state else 0,
            )
        )

    def _say(self, line: str) -> None:
        journal = _JOURNAL.get()
        if journal is not None:
            journal.progress(f"{self.provider}:{self.model} {line}")


def _size(request: ChatRequest) -> int:
    """About the bytes `request` takes in a batch: its text, UTF-8, and its schema."""
    text = sum(len(m.content.encode("utf-8")) for m in request.messages)
    return text + (len(str(request.json_schema)) if request.json_schema else 0) + 200


def _outcome(outcomes: Mapping[str, Outcome], key: str, batch_id: str) -> Outcome:
    found = outcomes.get(key)
    if found is None:
        return Unanswered(f"batch {batch_id} ended without answering the request")
    return found
