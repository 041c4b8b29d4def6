"""The per-sample part of the HTML report: every sample's outcome packed small, for the page's
script to show a page at a time.

The page embeds one JSON document, gzip-compressed and base64-encoded, that its script
decompresses in the browser (`DecompressionStream`):

    {"version": 2,
     "verdicts": [[value, css class, label, symbol], ...],   claims name a verdict by index
     "outcomes": [[value, css class, label, symbol], ...],   rows name an outcome by index
     "statuses": ["scored", "error", ...],                   rows name a status by index
     "metrics": [name, ...],                                 rows and details name one by index
     "lower": [name, ...],                                   metrics where lower is better
     "primary": name or null,                                the metric samples sort by
     "latency": "pipeline" or "dataset",                     who measured "lat" (see below)
     "rows": [[id, status, category, score, [[failed metric, score], ...], verdict bits,
               claims, outcome, unfaithful], ...],
     "order": [row, ...],                                    every row, worst first
     "details": [{"row": row, ...}, ...],                    the detailed samples, worst first
     "contexts": [text, ...],                                each distinct context text once
     "total": rows, "detailed": details}

A row is one sample in the order the renderer read them: enough to list, filter and sort it and
to give it its badge ("score" is the primary metric's, each failed metric comes with its score,
"verdict bits" has bit i set when a claim has verdict i, "outcome" is
`vera._results.sample_outcome`'s, "unfaithful" 1 where its answer verdict is unfaithful). A
detail holds what a person opens a sample for: the query ("q"), the response ("t"; null for a
sample without one, absent where the renderer was not given the text), the contexts ("x": an
index into "contexts", or [index, id, source]), the claims ("c"), the metrics ("m": [metric,
score, passed, status, reason, threshold]), the sentence that decided its outcome ("o"), how
many of its claims are unsupported or contradicted ("k", absent when none), the error ("err"),
the latency ("lat": the pipeline call's time as VERA measured it when the run had a pipeline,
else the dataset's own `latency_ms`), the pipeline steps ("st": [name, ms]) and the identified
languages of the response and the contexts ("lg", absent when neither is known). A claim is
{"id", "v": verdict, "s": [start, end] where it is highlighted in the response, "t": its text
where the span does not give it, "r": reason, "e": the evidence as [start, end] in its cited
context where it is found there, else the quote, "cx": cited context, "src": the cited context's
source label (`ClaimRecord.source`, absent where it has none), "qf", "ag", "en": quote found
(absent when the judge did not check), agreement, P(supported)}.

So no text is stored twice: a response once, a claim's text only where its span does not give
it, evidence only where it is not a slice of its context, and a context once however many
claims and samples cite it.

"version" changes whenever a reader of an older layout would misread this one (version 2 gave
rows their outcome and failed metrics their scores); `unpack` refuses any other version.

Samples are read once, in any number: rows are compressed as they arrive, and only their sort
keys and the detail of the `limit` worst samples (each compressed) are held. A report of more
samples than `limit` lists all of them but details only the worst, and says so.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vera._results._outcome import LABELS, Outcome, SampleOutcome, sample_outcome
from vera._types import Context, Sample, Verdict
from vera._types._report import ClaimRecord, MetricSummary, SampleResult, SampleStatus

FORMAT_VERSION = 2


@dataclass(frozen=True)
class VerdictStyle:
    """How a verdict is shown: a CSS class, a label, and a symbol so colour is not the only cue."""

    css: str
    label: str
    symbol: str


VERDICTS: dict[Verdict, VerdictStyle] = {
    Verdict.FULLY_SUPPORTED: VerdictStyle("v-fully", "Fully supported", "\N{CHECK MARK}"),
    Verdict.PARTIALLY_SUPPORTED: VerdictStyle(
        "v-partial", "Partially supported", "\N{CIRCLE WITH LEFT HALF BLACK}"
    ),
    Verdict.NO_EVIDENCE: VerdictStyle("v-none", "No evidence", "?"),
    Verdict.CONTRADICTED: VerdictStyle("v-contradicted", "Contradicted", "\N{BALLOT X}"),
}
_VERDICT_INDEX = {verdict: i for i, verdict in enumerate(VERDICTS)}

OUTCOMES: dict[Outcome, VerdictStyle] = {
    Outcome.FAIL: VerdictStyle("outcome-fail", LABELS[Outcome.FAIL], "\N{BALLOT X}"),
    Outcome.PASS_WITH_UNSUPPORTED: VerdictStyle(
        "outcome-warn", LABELS[Outcome.PASS_WITH_UNSUPPORTED], "\N{WARNING SIGN}"
    ),
    Outcome.PASS: VerdictStyle("outcome-pass", LABELS[Outcome.PASS], "\N{CHECK MARK}"),
    Outcome.NOT_GATED: VerdictStyle("outcome-none", LABELS[Outcome.NOT_GATED], "\N{EM DASH}"),
    Outcome.NOT_SCORED: VerdictStyle("outcome-none", LABELS[Outcome.NOT_SCORED], "\N{EM DASH}"),
}
"""How a sample's outcome badge is shown: amber, never green, for a pass with an unsupported
or contradicted claim, and a symbol beside the colour."""
_OUTCOME_INDEX = {outcome: i for i, outcome in enumerate(OUTCOMES)}
_STATUSES = list(SampleStatus)
_STATUS_INDEX = {status: i for i, status in enumerate(_STATUSES)}
_STATUS_ORDER = {
    SampleStatus.ERROR: 0,
    SampleStatus.SCORED: 1,
    SampleStatus.NEEDS_PIPELINE: 2,
    SampleStatus.SKIPPED: 3,
}

SortKey = tuple[int, int, float, int, str, int]


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _adjusted(score: float | None, summary: MetricSummary | None) -> float:
    """A score where lower is worse whatever the metric's direction; missing scores sort last."""
    if score is None or not math.isfinite(score):
        return math.inf
    return score if summary is None or summary.higher_is_better else -score


def order_key(
    result: SampleResult, index: int, primary: str | None, summary: MetricSummary | None
) -> SortKey:
    """Worst first: errors, then the scored samples that fail a metric (any metric, each in its
    own direction), then the other scored samples, each group by the first metric's score in
    its direction (ties: more failed metrics first), then samples that were not evaluated. The
    read order breaks the last ties, so two samples with one id still have one place each."""
    failed = sum(1 for r in result.results.values() if r.passed is False)
    adjusted = _adjusted(result.scores.get(primary) if primary else None, summary)
    status = _STATUS_ORDER.get(result.status, 4)
    return (status, 0 if failed else 1, adjusted, -failed, result.id, index)


def valid_spans(claims: Sequence[ClaimRecord], length: int) -> set[int]:
    """Indexes of the claims whose spans can be highlighted without overlapping."""
    order = sorted(
        (i for i, c in enumerate(claims) if c.span is not None),
        key=lambda i: claims[i].span or (0, 0),
    )
    chosen: set[int] = set()
    reached = 0
    for i in order:
        start, end = claims[i].span or (0, 0)
        if 0 <= start < end <= length and start >= reached:
            chosen.add(i)
            reached = end
    return chosen


def _evidence(record: ClaimRecord, contexts: Sequence[Context]) -> list[int] | str:
    """The evidence as a slice of its cited context where it is one, else the quote itself."""
    quote = record.evidence
    index = record.context_index
    if quote == quote.strip() and index is not None and 0 <= index < len(contexts):
        where = contexts[index].text.find(quote)
        if where >= 0:
            return [where, where + len(quote)]
    return quote


def _claim(
    record: ClaimRecord, response: str | None, located: bool, contexts: Sequence[Context]
) -> dict[str, Any]:
    claim: dict[str, Any] = {"id": record.id, "v": _VERDICT_INDEX[record.verdict]}
    if located and response is not None and record.span is not None:
        start, end = record.span
        claim["s"] = [start, end]
        if response[start:end] != record.text:
            claim["t"] = record.text
    else:
        claim["t"] = record.text
    if record.reason:
        claim["r"] = record.reason
    if record.evidence:
        claim["e"] = _evidence(record, contexts)
    optional = {
        "cx": record.context_index,
        "src": record.source,
        "qf": record.quote_found,
        "ag": _number(record.agreement),
        "en": _number(record.entailment),
    }
    claim.update((key, value) for key, value in optional.items() if value is not None)
    return claim


def _texts(
    result: SampleResult, sample: Sample | None
) -> tuple[str | None, str | None, tuple[Context, ...]]:
    """The query, response and contexts to show: the result's own where a pipeline answered,
    else the dataset's."""
    query = sample.query if sample is not None else None
    response = result.response
    if response is None and sample is not None:
        response = sample.response
    contexts = result.contexts or (sample.contexts if sample is not None else ())
    return query, response, contexts


def _detail(
    result: SampleResult,
    sample: Sample | None,
    metric_index: Mapping[str, int],
    outcome: SampleOutcome,
) -> dict[str, Any]:
    """What a person opens the sample for; contexts still as texts (the packer numbers them)."""
    query, response, contexts = _texts(result, sample)
    located = valid_spans(result.claims, len(response)) if response is not None else set()
    detail: dict[str, Any] = {
        "c": [_claim(c, response, i in located, contexts) for i, c in enumerate(result.claims)],
        "m": [
            [metric_index[name], _number(r.score), r.passed, r.status.value, r.reason, r.threshold]
            for name, r in result.results.items()
        ],
        "x": [[c.text, c.id, c.source] for c in contexts],
        "o": outcome.why,
    }
    if outcome.unsupported:
        detail["k"] = outcome.unsupported
    if sample is not None or response is not None:
        detail["t"] = response
    if query:
        detail["q"] = query
    if result.language or result.context_language:
        detail["lg"] = [result.language, result.context_language]
    if result.error:
        detail["err"] = str(result.error)
    if (latency := _number(result.latency_ms)) is not None:
        detail["lat"] = round(latency, 1)
    if result.steps:
        detail["st"] = [[s.name, round(s.latency_ms, 1)] for s in result.steps]
    return detail


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass
class _Stream:
    """A gzip stream fed text as it is made; only the compressed bytes are kept."""

    compressor: Any = field(default_factory=lambda: zlib.compressobj(6, zlib.DEFLATED, 31))
    chunks: list[bytes] = field(default_factory=list)

    def write(self, text: str) -> None:
        self.chunks.append(self.compressor.compress(text.encode("utf-8")))

    def close(self) -> bytes:
        self.chunks.append(self.compressor.flush())
        return b"".join(self.chunks)


@dataclass
class _Worst:
    """The `limit` items with the smallest keys seen so far, kept in at most twice that room."""

    limit: int | None
    items: list[tuple[SortKey, bytes]] = field(default_factory=list)
    bar: SortKey | None = None
    """The largest key still kept after the last pruning; anything above it cannot make it."""

    def wants(self, key: SortKey) -> bool:
        if self.limit == 0:
            return False
        return self.bar is None or key <= self.bar

    def add(self, key: SortKey, item: bytes) -> None:
        self.items.append((key, item))
        if self.limit is not None and len(self.items) > 2 * max(self.limit, 1):
            self.prune()

    def prune(self) -> None:
        self.items.sort(key=lambda pair: pair[0])
        if self.limit is None:
            return
        del self.items[self.limit :]
        self.bar = self.items[-1][0] if self.items else None


@dataclass(frozen=True)
class PackedSamples:
    """The packed samples and what the page says about them."""

    data: str
    """The JSON document, gzip-compressed, base64-encoded."""
    total: int
    detailed: int
    claims: int
    with_text: int
    """Detailed samples whose response text the renderer had."""


class SamplePacker:
    """Packs samples fed one at a time (`add`), then `finish` gives the page's data."""

    def __init__(
        self, summaries: Mapping[str, MetricSummary], *, limit: int | None, measured: bool = False
    ) -> None:
        """`measured`: the run had a pipeline, so each sample's latency is the pipeline call's
        time as VERA measured it, not the dataset's own figure."""
        self.primary = next(iter(summaries), None)
        self.summary = summaries.get(self.primary) if self.primary else None
        self.metrics: dict[str, int] = {name: i for i, name in enumerate(summaries)}
        self.lower = [name for name, s in summaries.items() if not s.higher_is_better]
        self.measured = measured
        self.stream = _Stream()
        self.keys: list[SortKey] = []
        self.worst = _Worst(limit)
        self.claims = 0
        self.stream.write('{"rows":[')

    def add(
        self, result: SampleResult, sample: Sample | None, outcome: SampleOutcome | None = None
    ) -> None:
        """One sample's result, with its dataset row where the renderer has it, and its outcome
        where the renderer already worked it out."""
        index = len(self.keys)
        for name in result.results:
            self.metrics.setdefault(name, len(self.metrics))
        outcome = outcome or sample_outcome(result)
        key = order_key(result, index, self.primary, self.summary)
        self.keys.append(key)
        self.claims += len(result.claims)
        self.stream.write(("," if index else "") + _json(self._row(result, outcome)))
        if self.worst.wants(key):
            detail = _detail(result, sample, self.metrics, outcome)
            detail["row"] = index
            self.worst.add(key, zlib.compress(_json(detail).encode("utf-8"), 1))

    def _row(self, result: SampleResult, outcome: SampleOutcome) -> list[Any]:
        verdicts = 0
        for claim in result.claims:
            verdicts |= 1 << _VERDICT_INDEX[claim.verdict]
        failed = [
            [self.metrics[n], _number(r.score)]
            for n, r in result.results.items()
            if r.passed is False
        ]
        score = _number(result.scores.get(self.primary)) if self.primary else None
        category = result.category
        status = _STATUS_INDEX[result.status]
        claims = len(result.claims)
        unfaithful = result.verdict is not None and result.verdict.passed is False
        return [
            result.id,
            status,
            category,
            score,
            failed,
            verdicts,
            claims,
            _OUTCOME_INDEX[outcome.outcome],
            int(unfaithful),
        ]

    def finish(self) -> PackedSamples:
        """The page's data: the rows already written, then the order, details and contexts."""
        self.worst.prune()
        order = sorted(range(len(self.keys)), key=self.keys.__getitem__)
        self.stream.write('],"order":' + _json(order) + ',"details":[')
        texts: dict[str, int] = {}
        with_text = 0
        for n, (_key, item) in enumerate(self.worst.items):
            detail = json.loads(zlib.decompress(item))
            detail["x"] = [_context_ref(texts, *context) for context in detail["x"]]
            with_text += detail.get("t") is not None
            self.stream.write(("," if n else "") + _json(detail))
        head = {
            "contexts": list(texts),
            "version": FORMAT_VERSION,
            "verdicts": [[v.value, s.css, s.label, s.symbol] for v, s in VERDICTS.items()],
            "outcomes": [[o.value, s.css, s.label, s.symbol] for o, s in OUTCOMES.items()],
            "statuses": [s.value for s in _STATUSES],
            "metrics": list(self.metrics),
            "lower": self.lower,
            "primary": self.primary,
            "latency": "pipeline" if self.measured else "dataset",
            "total": len(self.keys),
            "detailed": len(self.worst.items),
        }
        self.stream.write("]," + _json(head)[1:])
        data = base64.b64encode(self.stream.close()).decode("ascii")
        return PackedSamples(data, len(self.keys), len(self.worst.items), self.claims, with_text)


def _context_ref(
    texts: dict[str, int], text: str, id: str | None, source: str | None
) -> int | list[Any]:
    """A context as its number in the shared table, with its id and source where it has them."""
    number = texts.setdefault(text, len(texts))
    return number if id is None and source is None else [number, id, source]


def unpack(data: str) -> dict[str, Any]:
    """The JSON document `SamplePacker` made, from its base64 text: what the page's script
    reads, for tests and for tools that read an HTML report back."""
    document = json.loads(zlib.decompress(base64.b64decode(data), 31))
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        raise ValueError(f"not a VERA HTML report's sample data (version {FORMAT_VERSION})")
    return document
