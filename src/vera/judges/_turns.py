"""The turns of one conversation verified together: fewer judge calls for a conversation.

A conversation dataset gives one sample per assistant turn, and the run judges the samples
concurrently, each on its own. A judge that can verify several turns in one call (an LLM
judge in batched mode) is handed each turn with its `TurnGroup` (read from the sample's
metadata, set by `vera.datasets.turn_samples`); `TurnBatcher` holds the turns of a group until
all of them have arrived, then verifies them in one go, and hands each turn its own verdicts
(batched mode: `TurnItem`, each turn's claims; single_call mode: `vera.judges._turn_answers`,
each turn's answer, claims and verdicts asked for together).

The group's size is known in advance, so the wait is not a guess: the group leaves as soon as
its last turn arrives, and the dry run, which hands the judge the same groups, counts the same
calls. A group is at most `MAX_TURNS_PER_GROUP` turns (the run's default concurrency), so a
run never holds more waiting turns than it has slots; a run with fewer slots, or a turn that
never arrives (it failed before verification and withdrew), is not waited for beyond
`wait_s`: the turns there are leave without it, verified as the judge verifies them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from vera._types import Claim, ClaimVerdict
from vera._types._turns import GROUP_KEY, GROUP_SIZE_KEY


@dataclass(frozen=True)
class TurnGroup:
    """The turns verified together: a key unique to them in the run, and how many they are."""

    key: str
    size: int


def turn_group(metadata: Mapping[str, Any]) -> TurnGroup | None:
    """The group a turn sample belongs to; None for a sample that is no turn, or a group of
    one (nothing to verify together)."""
    key, size = metadata.get(GROUP_KEY), metadata.get(GROUP_SIZE_KEY)
    if not isinstance(key, str) or not isinstance(size, int) or size < 2:
        return None
    return TurnGroup(key, size)


@runtime_checkable
class TurnAnalyser(Protocol):
    """A judge that can verify the turns of one conversation together (`TurnBatcher`)."""

    async def analyse_turn(
        self, response: str, contexts: Sequence[str], *, query: str | None, group: TurnGroup
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """The claims of one turn's `response` and their verdicts against its `contexts`."""
        ...


class Waiting(Protocol):
    """A turn held by a `TurnBatcher`: `future` is settled by the group's verification."""

    @property
    def future(self) -> asyncio.Future[Any]: ...


ItemT = TypeVar("ItemT", bound=Waiting)


@dataclass
class TurnItem:
    """One turn's claims to verify against its own contexts, and where its verdicts go."""

    claims: list[Claim]
    contexts: list[str]
    verdicts: asyncio.Future[list[ClaimVerdict]]

    @property
    def future(self) -> asyncio.Future[list[ClaimVerdict]]:
        return self.verdicts


@dataclass
class _Pending(Generic[ItemT]):
    size: int
    arrived: int = 0
    items: list[ItemT] = field(default_factory=list)
    full: asyncio.Event = field(default_factory=asyncio.Event)


class TurnBatcher(Generic[ItemT]):
    """Holds the turns of each group until the group is complete, then has `verify` verify
    them together; `verify` must settle every item's future."""

    def __init__(
        self, verify: Callable[[list[ItemT]], Awaitable[None]], *, wait_s: float = 30.0
    ) -> None:
        self._verify = verify
        self._wait_s = wait_s
        self._pending: dict[str, _Pending[ItemT]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def verdicts(
        self: TurnBatcher[TurnItem],
        group: TurnGroup,
        claims: Sequence[Claim],
        contexts: Sequence[str],
    ) -> list[ClaimVerdict]:
        """The verdicts of one turn's claims, verified with the other turns of its group."""
        future: asyncio.Future[list[ClaimVerdict]] = asyncio.get_running_loop().create_future()
        item = TurnItem(list(claims), list(contexts), future)
        await self.join(group, item)
        return await item.verdicts

    async def join(self, group: TurnGroup, item: ItemT) -> None:
        """Hold `item` until its group leaves (complete, or `wait_s` on); then await its
        `future` for what the group's verification gave it."""
        pending = self._arrive(group)
        pending.items.append(item)
        if pending.arrived >= pending.size:
            self._leave(group.key, pending)
        else:
            try:
                await asyncio.wait_for(asyncio.shield(pending.full.wait()), self._wait_s)
            except TimeoutError:
                self._leave(group.key, pending)

    def withdraw(self, group: TurnGroup) -> None:
        """One turn of `group` that will not come (it failed before its verification)."""
        pending = self._arrive(group)
        if pending.arrived >= pending.size:
            self._leave(group.key, pending)

    def _arrive(self, group: TurnGroup) -> _Pending[ItemT]:
        pending = self._pending.setdefault(group.key, _Pending(group.size))
        pending.arrived += 1
        return pending

    def _leave(self, key: str, pending: _Pending[ItemT]) -> None:
        if self._pending.get(key) is not pending:
            return  # already left
        del self._pending[key]
        pending.full.set()
        if pending.items:
            task = asyncio.ensure_future(self._settle(pending.items))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _settle(self, items: list[ItemT]) -> None:
        try:
            await self._verify(items)
        except Exception as exc:  # each turn waiting hears of it as its own error
            for item in items:
                if not item.future.done():
                    item.future.set_exception(exc)
        for item in items:
            if not item.future.done():
                item.future.set_exception(
                    RuntimeError("the turn's verdicts were never given (a bug in the judge)")
                )


def bounded_batches(items: Sequence[TurnItem], max_claims: int) -> list[list[TurnItem]]:
    """`items` in order, cut into runs of turns with at most `max_claims` claims together (a
    turn with more goes alone, and its own verification splits it)."""
    batches: list[list[TurnItem]] = []
    count = 0
    for item in items:
        if batches and count + len(item.claims) <= max_claims:
            batches[-1].append(item)
            count += len(item.claims)
        else:
            batches.append([item])
            count = len(item.claims)
    return batches


def context_ranges(items: Sequence[TurnItem]) -> list[range]:
    """The 1-based numbers each turn's contexts get in the flat list the prompt shows."""
    ranges, start = [], 1
    for item in items:
        ranges.append(range(start, start + len(item.contexts)))
        start += len(item.contexts)
    return ranges


def render_turn_claims(items: Sequence[TurnItem], ranges: Sequence[range]) -> str:
    """The claims numbered across turns, under a line per turn naming the only contexts its
    claims may be judged against."""
    lines, number = [], 1
    for turn, (item, shown) in enumerate(zip(items, ranges, strict=True), start=1):
        allowed = f"contexts {shown.start} to {shown.stop - 1}" if shown else "no context"
        lines.append(f"Turn {turn}: judge these claims against {allowed} only")
        for claim in item.claims:
            lines.append(f"{number}. {claim.text}")
            number += 1
    return "\n".join(lines)
