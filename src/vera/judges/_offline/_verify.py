"""Claim verification by lexical alignment: find the best passage, then look for conflicts.

For each claim the judge picks the window of one or two adjacent context sentences that covers
most of the claim's content words, quotes it as evidence, and decides in this order: a number
no context states, a name no context states, a negation or antonym flip, then plain coverage.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from vera._sample_limits import check_deadline
from vera._types import Claim, ClaimVerdict, Verdict
from vera.judges._offline._binding import misattributed
from vera.judges._offline._index import context_index
from vera.judges._offline._languages import current_lexicon, lexicons
from vera.judges._offline._quantities import agreeing_keys, same_kind
from vera.judges._offline._record import (
    Record,
    RecordCheck,
    check_record,
    names_days,
    prose_days,
    record_of,
)
from vera.judges._offline._tokens import Facts, Name, Negation, Number, analyse, merge, stem

# How the reasons of the two NO_EVIDENCE verdicts that name a fact no context holds begin;
# `lexical_support` reads them to weigh such a claim.
UNSTATED = "no context states"
UNNAMED = "no context names"
UNSHARED = "no context shares a content word"
NOTHING = "nothing in the claim to check"
UNQUALIFIED = "no context states the condition"
# A claim with too few content words in any window: "closest passage" when it may be a
# paraphrase (at least `PARAPHRASE_COVERAGE` of its words are there), which the support
# model's probability can lift to PARTIALLY_SUPPORTED; "far from any passage" when not.
CLOSEST = "closest passage"
# A claim whose words a window holds in other forms: a synonym ("buy" for "purchase") or a
# word that opens or is opened by another ("Kauf" in "Kaufdatum").
PARAPHRASED = "paraphrase"
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


def _synonym_table(groups: tuple[tuple[str, ...], ...]) -> dict[str, str]:
    return {stem(word): group[0] for group in groups for word in group}


# Each language's synonyms: a stem to its group's first word.
_SYNONYM_TABLES = {lex.code: _synonym_table(lex.synonyms) for lex in lexicons()}


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
        self.records = {
            number: record
            for number, (text, index) in enumerate(zip(self.texts, self.indexes, strict=True))
            if index.structured and (record := record_of(text)) is not None
        }
        """The records among the contexts, by position."""
        self._prose: dict[int, Record] | None = None
        self.reviewed = any(record.reviews for record in self.records.values())
        """Whether a record among the contexts holds reviews."""

    def _prose_records(self) -> dict[int, Record]:
        """The days and hours prose contexts state, by position: read for the first claim
        that names a day, since a claim naming none is nothing they can confirm."""
        if self._prose is None:
            self._prose = {
                number: record
                for number, (text, index) in enumerate(zip(self.texts, self.indexes, strict=True))
                if not index.structured and (record := prose_days(text)) is not None
            }
        return self._prose

    def record_check(self, claim: str) -> RecordCheck | None:
        """The claim against the records among the contexts: the first conflict, else what
        they confirm together; None without a record."""
        found = self.records
        if names_days(claim):
            found = found | self._prose_records()
        if not found:
            return None
        checks = [check_record(claim, found[number]) for number in sorted(found)]
        conflict = next((c for c in checks if c.conflict is not None), None)
        if conflict is not None:
            return conflict
        return RecordCheck(
            None,
            tuple(w for c in checks for w in c.confirmed),
            any(c.days_checked for c in checks),
        )

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

    def names(self, name: Name) -> bool:
        """Whether some single context holds every word of a name, or its stem ("Mondays"),
        or the name written as one word ("WiFi" for "Wi-Fi"), or in short ("Gov." for
        "Governor", "Sat." for "Saturday") or as its people ("Chinese" for "China"). A number
        word is the number checks' to judge ("Final Four")."""
        words = name.words - current_lexicon().number_words.keys()
        joined = "".join(c for c in name.surface.lower() if c.isalnum())
        return any(
            joined in held or all(word in held or stem(word) in held for word in words)
            for held in self.words
        ) or any(all(_named_alike(word, held) for word in words) for held in self.words)


def _named_alike(word: str, held: frozenset[str]) -> bool:
    """Whether `held` names `word` in short or by its root: one is a prefix of at least three
    letters of the other ("gov", "governor"), or they share all but the last two letters of
    the shorter, four at least ("chin|a", "chin|ese")."""
    if word in held:
        return True
    for other in held:
        short, long_ = sorted((word, other), key=len)
        if len(short) >= 3 and long_.startswith(short):
            return True
        root = max(4, len(short) - 2)
        if len(short) >= root and long_[:root] == short[:root]:
            return True
    return False


def verify(
    claims: Sequence[Claim], contexts: Sequence[str], settings: Settings
) -> list[ClaimVerdict]:
    """One verdict per claim, in claim order, judged against `contexts` only."""
    if not contexts:
        return [
            ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason="no context was given") for c in claims
        ]
    index = _Contexts(contexts, settings.window_sentences)
    together = _Together(contexts, settings)
    verdicts = []
    for claim in claims:
        check_deadline()
        verdicts.append(together.better(claim, _judge(claim, index, settings)))
    return verdicts


SHORT_CONTEXT = 300
"""Characters up to which a context is short: a tool result ("count: 977"), a user's turn, a
record's field. A claim may draw on several of them at once, as a conversation's answer
draws on the tool results and questions of earlier turns."""
_TOGETHER_SENTENCES = 12


class _Together:
    """The sample's short contexts read as one text, for a claim that no single one of them
    supports but that they support together: "Lisbon had more orders in March: 1284 against
    977 for Porto" after two tool results and the user's questions."""

    def __init__(self, contexts: Sequence[str], settings: Settings) -> None:
        self.short = [i for i, text in enumerate(contexts) if len(text) <= SHORT_CONTEXT]
        self.texts = contexts
        self.settings = replace(settings, window_sentences=_TOGETHER_SENTENCES)
        self.index: _Contexts | None = None
        self.starts: list[int] = []
        """Where each short context starts in the joined text, and where the next would."""
        self.number_keys: list[frozenset[str]] = []
        """The number keys each short context states, read once when first needed."""

    def better(self, claim: Claim, alone: ClaimVerdict) -> ClaimVerdict:
        """`alone`, or the verdict against the short contexts together where that is better
        support: a conflict found in a single context stands."""
        if len(self.short) < 2 or alone.verdict in (Verdict.FULLY_SUPPORTED, Verdict.CONTRADICTED):
            return alone
        if self.index is None:
            pieces = [self.texts[i] for i in self.short]
            self.starts = [0]
            for piece in pieces:
                self.starts.append(self.starts[-1] + len(piece) + 1)
            self.index = _Contexts(["\n".join(pieces)], 1)
            self.index.width = _TOGETHER_SENTENCES
        if not self._numbers_together(claim):
            return alone
        joined = _judge(claim, self.index, self.settings)
        rank = (Verdict.NO_EVIDENCE, Verdict.PARTIALLY_SUPPORTED, Verdict.FULLY_SUPPORTED)
        if joined.verdict not in rank or rank.index(joined.verdict) <= rank.index(alone.verdict):
            return alone
        # Cited is the window's part in the context it opens in, so that the evidence is a
        # quote of the context it names.
        text = self.index.texts[0]
        start = max(text.find(joined.evidence or ""), 0)
        owner = bisect_right(self.starts, start) - 1
        end = min(start + len(joined.evidence or ""), self.starts[owner + 1] - 1)
        reason = f"{joined.reason}; read across {len(self.short)} short contexts"
        update = {"context_index": self.short[owner], "evidence": text[start:end], "reason": reason}
        return joined.model_copy(update=update)

    def _numbers_together(self, claim: Claim) -> bool:
        """Whether one short context states every number of the claim. Read together, the
        contexts would lend one entity's figure to another ("Order 42 shipped on May 3" and a
        tool's order 43 would support "Order 43 shipped on May 3"), so the claim's numbers
        must come from a single context; its other words may come from the rest."""
        keys = frozenset(n.key for n in analyse(claim.text).numbers)
        if not keys:
            return True
        if not self.number_keys:
            self.number_keys = [context_index(self.texts[i]).number_keys for i in self.short]
        return any(keys <= held for held in self.number_keys)


def _judge(claim: Claim, index: _Contexts, settings: Settings) -> ClaimVerdict:
    facts = analyse(claim.text)
    if not facts.content:
        return ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, reason=NOTHING)
    record = index.record_check(claim.text)
    match = index.best(facts.content)
    if match is None:
        return _unmatched(claim, facts, record, settings)
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

    conflict = _conflict(facts, match, index, settings, evidence, record)
    if conflict is not None:
        return verdict(*conflict)
    confirmed = record.confirmed_keys() if record is not None else frozenset()
    # A quantity the window states in other words ("2 hours" for "120 minutes") is covered,
    # and so is its unit; so are the days and attributes the record confirms.
    restated = _restated(facts, window.facts) | confirmed
    found = _by_coverage(claim.text, facts, window.facts, restated, settings, verdict)
    if index.reviewed and _summarises_reviews(found, claim.text):
        return verdict(Verdict.PARTIALLY_SUPPORTED, f"{REVIEW_SUMMARY}; {found.reason}")
    point = None if index.reviewed else _unstated_point(claim.text, facts, window.facts, restated)
    if point is not None and found.verdict is Verdict.PARTIALLY_SUPPORTED:
        return verdict(
            Verdict.NO_EVIDENCE, f"{UNSTATED_POINT} {point!r}; {found.reason}", cite=False
        )
    swap = _swapped_item(facts, window, restated) if found.verdict in _SUPPORTED else None
    if swap is not None:
        return verdict(Verdict.NO_EVIDENCE, f"{SWAPPED_ITEM} {swap}; {found.reason}", cite=False)
    return found


REVIEW_SUMMARY = "a summary of the reviews, which the words cannot confirm"
UNSTATED_POINT = "no context says what the claim says of it:"
_COPULA_END = r"\b(?:is|are|was|were|be|been|remains?|stays?)\s+(?:\w+\s+)?{word}\W*$"


SWAPPED_ITEM = "the context names another kind:"
_OFFERS = frozenset(stem(w) for w in ("include", "offer", "provide", "support", "cover", "accept"))
"""Verbs whose object is what a plan, product or place has: the object is the claim's point."""


def _swapped_item(facts: Facts, window: _Window, restated: frozenset[str]) -> str | None:
    """Where a claim says a thing includes (offers, covers, ...) one kind of an item and the
    window the same verb and item of another kind: "includes phone support" against
    "includes email support". The claim is that sentence with one word swapped, which its
    share of words cannot tell from support. English only."""
    lacking = facts.content - window.facts.content - restated
    if len(lacking) != 1 or current_lexicon().code != "en":
        return None
    [word] = lacking
    order = facts.order
    for at in range(1, len(order) - 1):
        verb, item = order[at - 1], order[at + 1]
        if order[at] != word or verb not in _OFFERS:
            continue
        for sentence in window.sentences:
            theirs = sentence.order
            for i in range(1, len(theirs) - 1):
                if (theirs[i - 1], theirs[i + 1]) == (verb, item) and theirs[
                    i
                ] not in facts.content:
                    kind = sentence.surfaces.get(theirs[i], theirs[i])
                    return f'claim says "{facts.surfaces.get(word, word)}", context "{kind}"'
    return None


def _unstated_point(text: str, facts: Facts, window: Facts, restated: frozenset[str]) -> str | None:
    """The word a claim ends on, after "is" or "are", when it is the one word the window lacks:
    "The device is waterproof.", "Express delivery is free." The rest of such a claim only
    names its subject; what it says of it is that last word, so the window has the subject and
    not the statement. None for any other claim."""
    lacking = facts.content - window.content - restated
    if len(lacking) != 1 or not facts.surfaces:
        return None
    last = list(facts.surfaces)[-1]
    surface = facts.surfaces[last]
    if last not in lacking or _alike(lacking, window.content):
        return None
    if not re.search(_COPULA_END.format(word=re.escape(surface)), text, re.I):
        return None
    return surface


_REVIEWISH = re.compile(
    r"\b(?:reviews?|reviewers?|customers?|diners?|patrons?|guests?|visitors?|people|praised?|"
    r"praising|complain\w*|criticiz\w*|mentioned|noted|overall|experiences?|feedback|"
    r"recommend\w*|popular|known)\b",
    re.I,
)


def _summarises_reviews(found: ClaimVerdict, claim: str) -> bool:
    """Whether `claim`, short of words in any window, reports what a record's reviews say
    ("customers praise the friendly staff"). Such a summary restates many reviews in words
    of its own, which coverage cannot tell from an invention: on RAGTruth's data-to-text rows
    most of them are faithful (answer-verdict balanced accuracy 0.61 with them NO_EVIDENCE,
    0.72 as PARTIALLY_SUPPORTED)."""
    if found.verdict is not Verdict.NO_EVIDENCE:
        return False
    return (found.reason or "").startswith((FAR, CLOSEST)) and bool(_REVIEWISH.search(claim))


def _unmatched(
    claim: Claim, facts: Facts, record: RecordCheck | None, settings: Settings
) -> ClaimVerdict:
    """A claim no window shares a word with: what a record says of it ("offers takeout"
    against `"RestaurantsTakeOut": true`), else NO_EVIDENCE."""
    if record is not None and record.conflict is not None:
        return ClaimVerdict(claim.id, Verdict.CONTRADICTED, reason=record.conflict)
    if record is None or not record.confirmed:
        return ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, reason=f"{UNSHARED} with it")

    def uncited(kind: Verdict, reason: str, *, cite: bool = True) -> ClaimVerdict:
        return ClaimVerdict(claim.id, kind, reason=reason)

    nothing = Facts(content=frozenset())
    return _by_coverage(claim.text, facts, nothing, record.confirmed_keys(), settings, uncited)


def _conflict(
    facts: Facts,
    match: _Match,
    index: _Contexts,
    settings: Settings,
    evidence: str,
    record: RecordCheck | None,
) -> tuple[Verdict, str] | None:
    """Why the claim conflicts with its best window, or with the record it is about."""
    if record is not None and record.conflict is not None:
        return Verdict.CONTRADICTED, record.conflict
    window = match.window
    if record is not None and record.days_checked:
        # Days the record confirms are named there, whatever words the window has for them.
        confirmed = {word.lower() for word in record.confirmed}
        facts = replace(
            facts, names=tuple(n for n in facts.names if n.surface.lower() not in confirmed)
        )
    conflict = _number_conflict(facts, window, index, settings) or _name_conflict(
        facts, window, index, settings
    )
    if conflict is None and not index.indexes[match.context_index].structured:
        conflict = _misattributed(facts, evidence, window, settings)
    if conflict is not None or (record is not None and record.confirmed):
        # What the record confirms, the words of its fields cannot turn into a flip.
        return conflict
    flip = (
        _flip(facts, window, settings)
        or _beyond_only(facts, window, settings)
        or _other_value(facts, window, settings)
        or _opposite_nearby(facts, window, settings)
    )
    return None if flip is None else (Verdict.CONTRADICTED, flip)


def _by_coverage(
    text: str,
    facts: Facts,
    window: Facts,
    restated: frozenset[str],
    settings: Settings,
    verdict: Callable[..., ClaimVerdict],
) -> ClaimVerdict:
    """The verdict by how much of the claim the window states, in its words or others."""
    total = len(facts.content)
    hits = len(facts.content & (window.content | restated))
    coverage = hits / total
    covered = f"context covers {hits}/{total} content words"
    missing = _missing(facts, window, restated)
    if missing:
        covered += "; missing: " + ", ".join(missing)
    invented = _invented_condition(text, facts, window.content | restated) if missing else None
    if invented is not None:
        return verdict(Verdict.NO_EVIDENCE, f"{UNQUALIFIED} {invented!r}; {covered}")
    if coverage >= settings.full_support:
        return verdict(Verdict.FULLY_SUPPORTED, covered)
    if coverage >= settings.partial_support:
        return verdict(Verdict.PARTIALLY_SUPPORTED, covered)
    alike = _alike(facts.content - window.content - restated, window.content)
    if (hits + alike) / total >= settings.partial_support:
        return verdict(Verdict.PARTIALLY_SUPPORTED, f"{PARAPHRASED}: {covered}; {alike} more alike")
    if coverage >= PARAPHRASE_COVERAGE:
        return verdict(Verdict.NO_EVIDENCE, f"{CLOSEST}: {covered}", cite=False)
    return verdict(Verdict.NO_EVIDENCE, f"{FAR}: {covered}", cite=False)


def _alike(missing: frozenset[str], window: frozenset[str]) -> int:
    """How many of the `missing` claim words the window states in other words: a synonym
    of the language's table, or (outside CJK, whose bigrams are too short) a word of at
    least four letters that begins another ("kauf", "kaufdatum"), or shares its first five."""
    if not missing:
        return 0
    lex = current_lexicon()
    synonyms = _SYNONYM_TABLES[lex.code]
    groups = {synonyms[w] for w in window if w in synonyms}
    found = 0
    for word in missing:
        related = not lex.cjk and len(word) >= 4 and any(_related(word, w) for w in window)
        found += related or synonyms.get(word) in groups
    return found


def _related(a: str, b: str) -> bool:
    if a[:1] != b[:1] or len(b) < 4:
        return False
    return a.startswith(b) or b.startswith(a) or (len(a) >= 5 and a[:5] == b[:5])


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
            if keys <= context.postings.contents[i]:
                return number, index.texts[number][start:end]
    return None


def _coverage(content: frozenset[str], window: frozenset[str]) -> float:
    return len(content & window) / len(content) if content else 0.0


def _number_conflict(
    facts: Facts, window: _Window, index: _Contexts, settings: Settings
) -> tuple[Verdict, str] | None:
    restated = agreeing_keys(facts.numbers, window.facts.numbers)
    off_window = [
        n
        for n in facts.numbers
        if n.key not in window.facts.content
        and n.key not in restated
        and not _worked_out(n, window.facts.numbers)
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
        if rival is None and not stated_elsewhere and rest >= settings.contradiction_alignment:
            # Another unit of the same kind ("two years" against "12 months"), but not an
            # age or a size used as a word ("a 42-year-old").
            rival = next(
                (
                    n
                    for n in window.facts.numbers
                    if same_kind(n, number) and n.key not in keys and "-" not in n.surface
                ),
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


def _worked_out(number: Number, stated: tuple[Number, ...]) -> bool:
    """Whether `number` is the sum or difference of two quantities of its unit the window
    states: "500 GB quota, 430 GB used, so 70 GB are left". A unit is required, so that two
    bare numbers cannot happen to add up to anything."""
    if number.unit is None:
        return False
    try:
        value = float(number.key)
    except ValueError:
        return False
    # Each value once: "thirty (30) days" states 30 once, and 30 + 30 is no 60 it states.
    values = sorted({float(n.key) for n in stated if n.unit == number.unit and _numeric(n.key)})
    return any(
        abs(a - b) == value or a + b == value for i, a in enumerate(values) for b in values[i + 1 :]
    )


def _numeric(key: str) -> bool:
    try:
        float(key)
    except ValueError:
        return False
    return True


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
    absent = [name for name in facts.names if not index.names(name)]
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
    if (
        _agreeing_denials(facts, anchor)
        or _denied_in_words(claim_negated, anchor)
        or _denied_in_words(context_negated, facts)
    ):
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


def _denied_in_words(negated: list[Negation], other: Facts) -> bool:
    """Whether `other` denies in words of its own what `negated` negates: "refuses to discuss"
    against "won't discuss". An antonym of the negated word is no such denial: "accept or
    reject" against "not accept" is the flip `_flip` looks for."""
    found = {stem(w) for w in other.words & current_lexicon().denials}
    antonyms = _antonyms()
    return any(found - antonyms.get(n.scope, frozenset()) for n in negated)


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


_ONLY_ALIGNMENT = 0.8
"""Share of the claim's other words the sentence with the "only" must state: the claim must be
that sentence with one thing added, not another statement beside it."""


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
    # CJK bigrams straddle words, so their share reads lower than the words' own.
    if rest < (settings.contradiction_alignment if current_lexicon().cjk else _ONLY_ALIGNMENT):
        return None
    only = ", ".join(anchor.surfaces.get(k, k) for k in sorted(_restricted(anchor) - facts.content))
    return f'context says only "{only}"; claim says "{facts.surfaces[added]}"'


def _other_value(facts: Facts, window: _Window, settings: Settings) -> str | None:
    """Why a sentence of the window gives another value of what the claim states ("billed
    annually" for "billed monthly"), or None. Each sentence is read alone, so the words of
    "Monthly reports are emailed" cannot make up for the billing sentence's other value."""
    for group in current_lexicon().value_groups:
        said = {group[w]: w for w in facts.words if w in group}
        if not said:
            continue
        own = frozenset(stem(w) for w in said.values())
        for sentence in window.sentences:
            stated = {group[w]: w for w in sentence.words if w in group}
            if not stated or said.keys() & stated.keys():
                continue
            if _coverage(facts.content - own, sentence.content) >= settings.contradiction_alignment:
                claim, context = min(said.values()), min(stated.values())
                return f'claim says "{claim}"; context says "{context}"'
    return None


def _opposite_nearby(facts: Facts, window: _Window, settings: Settings) -> str | None:
    """Why another sentence of the window than the best-aligned one says the opposite of a
    claim word about the same thing ("일요일은 휴무입니다" after the opening hours), or None."""
    if len(window.sentences) < 2 or len(facts.content) < 2:
        return None
    antonyms = _antonyms()
    for word in facts.surfaces:
        opposites = antonyms.get(word)
        if not opposites:
            continue
        rest = facts.content - {word}
        for sentence in window.sentences:
            found = (opposites & sentence.content) - facts.content
            # Bigrams that straddle two words make CJK agreement look lower than it is.
            if (
                found
                and word not in sentence.content
                and _coverage(rest, sentence.content) >= settings.partial_support
            ):
                other = sentence.surfaces.get(min(found), min(found))
                return f'claim says "{facts.surfaces[word]}"; context says "{other}"'
    return None


def _invented_condition(text: str, facts: Facts, window: frozenset[str]) -> str | None:
    """The condition or qualifier the claim adds that the window does not state ("for premium
    members", "プレミアム会員の場合"), or None: content words the window lacks right beside a
    word that opens a condition. A paraphrase differs in words all over; an invented
    qualifier is one missing phrase hung on a condition."""
    lex = current_lexicon()
    if not lex.conditions:
        return None
    lower = text.lower()
    for cue in lex.conditions:
        at = _cue_at(lower, cue, spaced=not lex.cjk)
        if at < 0:
            continue
        # Conditions come before what they govern in the Latin languages and Chinese, after
        # it in Japanese and Korean (postpositions).
        before = lex.cjk and lex.code != "zh"
        span = text[max(0, at - 12) : at] if before else text[at + len(cue) : at + len(cue) + 30]
        keys = list(analyse(span).surfaces)
        if not keys:
            continue
        # What the condition is about: the word right after the cue ("for premium members"),
        # or right before a postposition ("プレミアム会員の場合").
        word = keys[-1] if before else keys[0]
        near = frozenset(keys) - window
        # Only a claim otherwise stated in full: one that differs elsewhere too is a
        # paraphrase or a summary, which the words cannot settle.
        rest = facts.content - near - analyse(cue).content
        if word in near and word in facts.content and _coverage(rest, window) >= 1.0:
            return (span if before else text[at : at + len(cue) + len(span)]).strip(_PUNCTUATION)
    return None


# What a quoted condition is trimmed of: spaces and the commas of each script.
_PUNCTUATION = " ,\u3001\uff0c"


def _cue_at(lower: str, cue: str, *, spaced: bool) -> int:
    """Where `cue` stands in `lower` (any occurrence in CJK), or -1. Where words are spaced,
    only a cue that opens the claim counts ("For premium members, …", "If you are …"): a
    "for" or "when" inside a sentence is as often a purpose or a time the context implies
    ("provides oxygen for energy production"), and "for example" is none."""
    if not spaced:
        return lower.find(cue)
    match = re.match(rf"\W*{re.escape(cue)}(?!\w)", lower)
    if match is None or re.match(r"\s+(?:example|instance)\b", lower[match.end() :]):
        return -1
    return match.end() - len(cue)


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
