"""Claim verification by lexical alignment: find the best passage, then look for conflicts.

For each claim the judge picks the window of one or two adjacent context sentences that covers
most of the claim's content words, quotes it as evidence, and decides in this order: a number
no context states, a name no context states, a negation or antonym flip, then plain coverage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vera._sample_limits import check_deadline
from vera.judges.offline._binding import misattributed
from vera.judges.offline._index import context_index
from vera.judges.offline._languages import current_lexicon, lexicons
from vera.judges.offline._quantities import agreeing_keys
from vera.judges.offline._tokens import Facts, analyse, merge, stem
from vera.types import Claim, ClaimVerdict, Verdict

__all__ = [
    "CLOSEST",
    "FAR",
    "NOTHING",
    "PARAPHRASE_COVERAGE",
    "UNNAMED",
    "UNSHARED",
    "UNSTATED",
    "Settings",
    "verify",
]

# How the reasons of the two NO_EVIDENCE verdicts that name a fact no context holds begin;
# `lexical_support` reads them to weigh such a claim.
UNSTATED = "no context states"
UNNAMED = "no context names"
UNSHARED = "no context shares a content word"
NOTHING = "nothing in the claim to check"
# A claim with too few content words in any window: "closest passage" when it may be a
# paraphrase (at least `PARAPHRASE_COVERAGE` of its words are there), which the support
# model's probability can lift to PARTIALLY_SUPPORTED; "far from any passage" when not.
CLOSEST = "closest passage"
FAR = "far from any passage"
PARAPHRASE_COVERAGE = 0.3


RECORD_WINDOW = 6
"""Most adjacent fields of a structured context read together as one window."""


@dataclass(frozen=True, slots=True)
class Settings:
    """The offline judge's thresholds; `OfflineJudge` documents each one."""

    full_support: float = 0.8
    partial_support: float = 0.5
    contradiction_alignment: float = 0.6
    number_alignment: float = 0.3
    window_sentences: int = 2


@dataclass(frozen=True, slots=True)
class _Window:
    start: int
    end: int
    facts: Facts
    sentences: tuple[Facts, ...]


@dataclass(frozen=True, slots=True)
class _Match:
    context_index: int
    window: _Window
    hits: int


def _antonym_table(pairs: tuple[tuple[str, str], ...]) -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for left, right in pairs:
        a, b = stem(left), stem(right)
        table.setdefault(a, set()).add(b)
        table.setdefault(b, set()).add(a)
    return {word: frozenset(opposites) for word, opposites in table.items()}


# Each language's antonyms, by lexicon code; English's is ANTONYM_PAIRS.
_ANTONYM_TABLES = {lex.code: _antonym_table(lex.antonym_pairs) for lex in lexicons()}


def _antonyms() -> dict[str, frozenset[str]]:
    return _ANTONYM_TABLES[current_lexicon().code]


class _Contexts:
    """One call's contexts, each analysed once per text and shared by every claim."""

    def __init__(self, contexts: Sequence[str], window_sentences: int) -> None:
        self.texts = list(contexts)
        self.width = max(window_sentences, 1)
        self.indexes = [context_index(text) for text in self.texts]
        self.words = [index.words for index in self.indexes]
        self.number_keys = frozenset().union(*(index.number_keys for index in self.indexes))
        self.numbers = tuple(n for index in self.indexes for n in index.numbers)

    def best(self, content: frozenset[str]) -> _Match | None:
        """The window sharing most content with the claim; ties go to the shorter, then the
        first (the first context, then the first sentence)."""
        best: tuple[int, int, int] = (0, 0, 0)
        where = 0
        for number, index in enumerate(self.indexes):
            # A claim about a record draws on several of its fields at once ("X, a brunch
            # spot in Santa Barbara, CA"), each a unit of its own.
            width = max(self.width, RECORD_WINDOW) if index.structured else self.width
            found = index.postings.best(content, width)
            if found[:2] > best[:2]:
                best, where = found, number
        hits, size, start = best[0], -best[1], -best[2]
        if hits == 0:
            return None
        index = self.indexes[where]
        parts = tuple(index.facts(i) for i in range(start, start + size))
        window = _Window(
            index.spans[start][0], index.spans[start + size - 1][1], merge(parts), parts
        )
        return _Match(where, window, hits)

    def names(self, words: frozenset[str]) -> bool:
        """Whether some single context holds every word of a name, or its stem ("Mondays")."""
        return any(all(word in held or stem(word) in held for word in words) for held in self.words)


def verify(
    claims: Sequence[Claim], contexts: Sequence[str], settings: Settings
) -> list[ClaimVerdict]:
    """One verdict per claim, in claim order, judged against `contexts` only."""
    if not contexts:
        return [
            ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason="no context was given") for c in claims
        ]
    index = _Contexts(contexts, settings.window_sentences)
    verdicts = []
    for claim in claims:
        check_deadline()
        verdicts.append(_judge(claim, index, settings))
    return verdicts


def _judge(claim: Claim, index: _Contexts, settings: Settings) -> ClaimVerdict:
    facts = analyse(claim.text)
    if not facts.content:
        return ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, reason=NOTHING)
    match = index.best(facts.content)
    if match is None:
        return ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, reason=f"{UNSHARED} with it")
    window = match.window
    evidence = index.texts[match.context_index][window.start : window.end]

    def verdict(kind: Verdict, reason: str, *, cite: bool = True) -> ClaimVerdict:
        if not cite:
            return ClaimVerdict(claim.id, kind, reason=reason)
        if kind in _SUPPORTED:
            source = _number_source(facts, match, index)
            if source is not None:
                return ClaimVerdict(claim.id, kind, source[1], source[0], reason)
        return ClaimVerdict(claim.id, kind, evidence, match.context_index, reason)

    conflict = _number_conflict(facts, window, index, settings) or _name_conflict(
        facts, window, index, settings
    )
    if conflict is None and not index.indexes[match.context_index].structured:
        conflict = _misattributed(facts, evidence, window, settings)
    if conflict is not None:
        return verdict(*conflict)
    flip = _flip(facts, window, settings) or _beyond_only(facts, window, settings)
    if flip is not None:
        return verdict(Verdict.CONTRADICTED, flip)

    total = len(facts.content)
    # A quantity the window states in other words ("2 hours" for "120 minutes") is covered,
    # and so is its unit.
    restated = _restated(facts, window.facts)
    hits = len(facts.content & (window.facts.content | restated))
    coverage = hits / total
    covered = f"context covers {hits}/{total} content words"
    missing = _missing(facts, window.facts, restated)
    if missing:
        covered += "; missing: " + ", ".join(missing)
    if coverage >= settings.full_support:
        return verdict(Verdict.FULLY_SUPPORTED, covered)
    if coverage >= settings.partial_support:
        return verdict(Verdict.PARTIALLY_SUPPORTED, covered)
    if coverage >= PARAPHRASE_COVERAGE:
        return verdict(Verdict.NO_EVIDENCE, f"{CLOSEST}: {covered}", cite=False)
    return verdict(Verdict.NO_EVIDENCE, f"{FAR}: {covered}", cite=False)


_SUPPORTED = frozenset({Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED})


def _number_source(facts: Facts, match: _Match, index: _Contexts) -> tuple[int, str] | None:
    """The context, and its sentence, that states the claim's numbers, where the window that
    shares most words with the claim states none of them: the claim's figure came from there
    ("1284" from a tool's "count: 1284", not from the question "how many orders ...?" that
    shares its other words), so a supported verdict cites it. None when the window states one
    of them, or no other single sentence states them all."""
    window = match.window.facts
    keys = frozenset(n.key for n in facts.numbers) - window.content
    keys -= agreeing_keys(facts.numbers, window.numbers)
    if not keys or len(keys) < len(facts.numbers):
        return None
    for number, context in enumerate(index.indexes):
        if number == match.context_index or not keys <= context.number_keys:
            continue
        for i, (start, end) in enumerate(context.spans):
            if keys <= context.facts(i).content:
                return number, index.texts[number][start:end]
    return None


def _coverage(content: frozenset[str], window: frozenset[str]) -> float:
    return len(content & window) / len(content) if content else 0.0


def _number_conflict(
    facts: Facts, window: _Window, index: _Contexts, settings: Settings
) -> tuple[Verdict, str] | None:
    restated = agreeing_keys(facts.numbers, window.facts.numbers)
    off_window = [
        n for n in facts.numbers if n.key not in window.facts.content and n.key not in restated
    ]
    if not off_window:
        return None
    keys = frozenset(n.key for n in facts.numbers)
    rest = _coverage(facts.content - keys, window.facts.content)
    for number in off_window:
        stated_elsewhere = number.key in index.number_keys
        # A unit already ties two quantities together ("30 days" / "60 days"), so a typed
        # number needs less surrounding agreement than a bare one before it counts as a
        # clash. A number some other passage states is only a clash against a window that
        # clearly speaks about the same thing.
        if number.unit and not stated_elsewhere:
            needed = settings.number_alignment
        else:
            needed = settings.contradiction_alignment
        rival = next(
            (n for n in window.facts.numbers if n.unit == number.unit and n.key not in keys),
            None,
        )
        if rival is not None and rest >= needed:
            return (
                Verdict.CONTRADICTED,
                f"claim says {number.surface}; context says {rival.surface}",
            )
    # Spelled-out small numbers ("the two sources") are usually counts a reader infers, not
    # quantities the context must state; they can contradict above, but not be unsupported.
    elsewhere = agreeing_keys(off_window, index.numbers)
    absent = [
        n
        for n in off_window
        if n.key not in index.number_keys and n.key not in elsewhere and not n.surface[:1].isalpha()
    ]
    if not absent:
        return None
    said = ", ".join(n.surface for n in absent)
    return Verdict.NO_EVIDENCE, f"{UNSTATED} {said}"


def _misattributed(
    facts: Facts, evidence: str, window: _Window, settings: Settings
) -> tuple[Verdict, str] | None:
    """A number the window states, but of another item of a list than the one the claim is
    about (`binding.py`), where the rest of the claim clearly speaks about the window."""
    if not facts.numbers or len(window.facts.numbers) < 2:
        return None
    keys = frozenset(n.key for n in facts.numbers)
    # Naming an item of the list and stating one of its numbers already ties the claim to the
    # list, so it needs only as much other agreement as a number with a unit does.
    if _coverage(facts.content - keys, window.facts.content) < settings.number_alignment:
        return None
    found = misattributed(facts, evidence)
    if found is None:
        return None
    said, rival = found
    if rival is None:
        return Verdict.NO_EVIDENCE, f"{UNSTATED} {said} for what the claim is about"
    return Verdict.CONTRADICTED, f"claim says {said}; context says {rival} for it"


def _name_conflict(
    facts: Facts, window: _Window, index: _Contexts, settings: Settings
) -> tuple[Verdict, str] | None:
    absent = [name for name in facts.names if not index.names(name.words)]
    if not absent:
        return None
    name_keys = frozenset(stem(word) for name in absent for word in name.words)
    rest = _coverage(facts.content - name_keys, window.facts.content)
    rival = next((n for n in window.facts.names if not n.words <= facts.words), None)
    if rival is not None and rest >= settings.contradiction_alignment:
        return (
            Verdict.CONTRADICTED,
            f"swapped name: claim says {absent[0].surface}; context says {rival.surface}",
        )
    said = ", ".join(name.surface for name in absent)
    return Verdict.NO_EVIDENCE, f"{UNNAMED} {said}"


def _flip(facts: Facts, window: _Window, settings: Settings) -> str | None:
    """Why the best-aligned sentence says the opposite of the claim, or None.

    A negation flip and an antonym flip cancel out ("did not increase" / "decreased").
    """
    anchor = max(window.sentences, key=lambda s: len(facts.content & s.content))
    total = len(facts.content)
    reasons: list[str] = []
    aligned = len(facts.content & anchor.content) / total
    # Only a negation whose negated word the other side also states can flip the meaning.
    # ("did not increase" against "decreased" negates the antonym, and the two cancel out).
    # A negation the other side makes too agrees with it, and a context that also states
    # the word outside the negation ("accept or reject each order; an order not rejected is
    # accepted") does not deny it.
    claim_scopes = {n.scope for n in facts.negations}
    context_scopes = {n.scope for n in anchor.negations}
    claim_negated = [
        n
        for n in facts.negations
        if _states(n.scope, anchor.content) and n.scope not in context_scopes
    ]
    context_negated = [
        n
        for n in anchor.negations
        if _states(n.scope, facts.content)
        and n.scope not in claim_scopes
        and n.scope not in anchor.affirmed
    ]
    if _agreeing_denials(facts, anchor):
        claim_negated = context_negated = []
    if _restricted(anchor) and facts.content - anchor.content:
        # Denying what the context's "only" leaves out agrees with it: "does not include
        # phone support" with "includes email support only".
        claim_negated = []
    if aligned >= settings.contradiction_alignment and (
        len(claim_negated) % 2 != len(context_negated) % 2
    ):
        if claim_negated:
            reasons.append(f'claim is negated ("{claim_negated[0].cue}"); context is not')
        else:
            reasons.append(f'context is negated ("{context_negated[0].cue}"); claim is not')
    # `surfaces` keeps text order, so the reason names the same word on every run.
    antonyms = _antonyms()
    for word in facts.surfaces:
        opposites = antonyms.get(word)
        if not opposites or word in anchor.content or total < 2:
            continue
        # A claim that holds both words ("excludes …, including …") is not a swap.
        found = (opposites & anchor.content) - facts.content
        rest = len((facts.content - {word}) & anchor.content) / (total - 1)
        if found and rest >= settings.contradiction_alignment:
            other = anchor.surfaces.get(min(found), min(found))
            reasons.append(f'claim says "{facts.surfaces.get(word, word)}"; context says "{other}"')
            break
    return reasons[0] if len(reasons) == 1 else None


def _agreeing_denials(facts: Facts, anchor: Facts) -> bool:
    """Whether both sides deny something, as often: "does not offer outdoor seating" and
    "not outdoor seating" agree, though their negations fall on different words. A negation
    whose word the context also affirms ("an order not rejected", beside "accept or reject")
    denies nothing."""
    live = [n for n in anchor.negations if n.scope not in anchor.affirmed]
    return bool(facts.negations and live) and len(facts.negations) % 2 == len(live) % 2


def _excludes(anchor: Facts, facts: Facts) -> bool:
    """Whether `anchor` restricts itself ("email support only") to something the claim lacks,
    while the claim names something `anchor` does not: what the "only" leaves out."""
    return bool(_restricted(anchor) - facts.content) and bool(facts.content - anchor.content)


def _restricted(anchor: Facts) -> frozenset[str]:
    """What `anchor`'s "only" restricts, but for quantities: "the first 12 months only" limits
    a duration, and says nothing about what else is covered."""
    quantities = {n.key for n in anchor.numbers} | {n.unit or "" for n in anchor.numbers}
    return anchor.exclusive - quantities


def _beyond_only(facts: Facts, window: _Window, settings: Settings) -> str | None:
    """Why an affirmative claim adds what the context's "only" rules out, or None: "includes
    phone support" against "includes email support only"."""
    if facts.negations or len(facts.content) < 2:
        return None
    anchor = max(window.sentences, key=lambda s: len(facts.content & s.content))
    if not _excludes(anchor, facts):
        return None
    added = next(key for key in facts.surfaces if key not in anchor.content)
    rest = _coverage(facts.content - {added}, anchor.content)
    if rest < settings.contradiction_alignment:
        return None
    only = ", ".join(anchor.surfaces.get(k, k) for k in sorted(_restricted(anchor) - facts.content))
    return f'context says only "{only}"; claim says "{facts.surfaces[added]}"'


def _states(word: str, content: frozenset[str]) -> bool:
    """Whether `content` states `word` or its antonym."""
    return bool(word) and (word in content or bool(_antonyms().get(word, frozenset()) & content))


def _missing(facts: Facts, window: Facts, restated: frozenset[str]) -> list[str]:
    seen = window.content | restated
    missing = [surface for key, surface in facts.surfaces.items() if key not in seen]
    missing += [n.surface for n in facts.numbers if n.key not in seen]
    return missing[:5]


def _restated(facts: Facts, window: Facts) -> frozenset[str]:
    """The claim's number keys, and their unit stems, that `window` states in other words."""
    agreed = [n for n in facts.numbers if n.key in agreeing_keys([n], window.numbers)]
    return frozenset(n.key for n in agreed) | frozenset(n.unit for n in agreed if n.unit)
