"""The per-sample part of the HTML report: responses cut into claim highlights, and order.

A claim is highlighted where its `span` falls inside the sample's response. A claim without a
span, with one outside the response or overlapping an earlier claim, or of a sample whose text
the renderer was not given, is listed instead of highlighted; no claim is ever dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vera.report import ClaimRecord, MetricSummary, SampleResult, SampleStatus
from vera.types import Context, Sample, Verdict

__all__ = [
    "VERDICTS",
    "ClaimView",
    "ContextView",
    "MetricLine",
    "SampleView",
    "Segment",
    "VerdictStyle",
    "sample_views",
]


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


@dataclass(frozen=True)
class ContextView:
    """The context a claim cites, cut around its evidence quote when the quote is found in it."""

    label: str
    before: str
    quote: str
    after: str


@dataclass(frozen=True)
class ClaimView:
    """One claim with its verdict's style, an anchor in the page, and its cited context."""

    number: int
    anchor: str
    record: ClaimRecord
    style: VerdictStyle
    context: ContextView | None
    located: bool


@dataclass(frozen=True)
class Segment:
    """A run of response text, highlighted when it belongs to a claim."""

    text: str
    claim: ClaimView | None = None


@dataclass(frozen=True)
class MetricLine:
    """One metric's outcome on one sample."""

    name: str
    score: float | None
    passed: bool | None
    status: str
    reason: str


@dataclass(frozen=True)
class SampleView:
    """Everything the template shows for one sample."""

    anchor: str
    result: SampleResult
    sample: Sample | None
    metrics: tuple[MetricLine, ...]
    segments: tuple[Segment, ...]
    claims: tuple[ClaimView, ...]
    failed: tuple[str, ...]
    verdicts: str
    """The distinct verdicts among the claims, space-separated, for the client-side filter."""
    open: bool

    @property
    def unlocated(self) -> tuple[ClaimView, ...]:
        """The claims that could not be highlighted in the response text."""
        return tuple(c for c in self.claims if not c.located)


def _context_label(index: int, context: Context) -> str:
    named = context.id or context.source
    return f"Context {index + 1}" + (f" ({named})" if named else "")


def _cited(record: ClaimRecord, sample: Sample | None) -> ContextView | None:
    if sample is None or record.context_index is None:
        return None
    if not 0 <= record.context_index < len(sample.contexts):
        return None
    context = sample.contexts[record.context_index]
    label = _context_label(record.context_index, context)
    quote = record.evidence.strip()
    where = context.text.find(quote) if quote else -1
    if where < 0:
        return ContextView(label, context.text, "", "")
    end = where + len(quote)
    return ContextView(label, context.text[:where], quote, context.text[end:])


def _valid_spans(claims: Sequence[ClaimRecord], length: int) -> set[int]:
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


def _segments(response: str, views: Sequence[ClaimView]) -> tuple[Segment, ...]:
    located = sorted((v for v in views if v.located), key=lambda v: v.record.span or (0, 0))
    segments: list[Segment] = []
    position = 0
    for view in located:
        start, end = view.record.span or (0, 0)
        if start > position:
            segments.append(Segment(response[position:start]))
        segments.append(Segment(response[start:end], view))
        position = end
    if position < len(response):
        segments.append(Segment(response[position:]))
    return tuple(segments)


def _adjusted(score: float | None, summary: MetricSummary | None) -> float:
    """A score where lower is worse whatever the metric's direction; missing scores sort last."""
    if score is None or not math.isfinite(score):
        return math.inf
    return score if summary is None or summary.higher_is_better else -score


_STATUS_ORDER = {
    SampleStatus.ERROR: 0,
    SampleStatus.SCORED: 1,
    SampleStatus.NEEDS_PIPELINE: 2,
    SampleStatus.SKIPPED: 3,
}


def _order_key(
    result: SampleResult, primary: str | None, summaries: Mapping[str, MetricSummary]
) -> tuple[int, float, int, str]:
    failed = sum(1 for r in result.results.values() if r.passed is False)
    score = result.scores.get(primary) if primary else None
    adjusted = _adjusted(score, summaries.get(primary) if primary else None)
    return (_STATUS_ORDER.get(result.status, 4), adjusted, -failed, result.id)


def _view(index: int, result: SampleResult, sample: Sample | None, *, open: bool) -> SampleView:
    anchor = f"s{index}"
    response = sample.response if sample is not None else None
    located = _valid_spans(result.claims, len(response)) if response is not None else set()
    claims = tuple(
        ClaimView(
            number=i + 1,
            anchor=f"{anchor}-c{i + 1}",
            record=record,
            style=VERDICTS[record.verdict],
            context=_cited(record, sample),
            located=i in located,
        )
        for i, record in enumerate(result.claims)
    )
    metrics = tuple(
        MetricLine(name, r.score, r.passed, r.status.value, r.reason)
        for name, r in result.results.items()
    )
    present = {c.record.verdict for c in claims}
    return SampleView(
        anchor=anchor,
        result=result,
        sample=sample,
        metrics=metrics,
        segments=_segments(response, claims) if response is not None else (),
        claims=claims,
        failed=tuple(m.name for m in metrics if m.passed is False),
        verdicts=" ".join(v.value for v in VERDICTS if v in present),
        open=open,
    )


def sample_views(
    results: Sequence[SampleResult],
    samples: Mapping[str, Sample] | None,
    summaries: Mapping[str, MetricSummary],
    *,
    opened: int = 3,
) -> list[SampleView]:
    """The samples, worst first: errors, then scored samples by their first metric's score in
    its direction (ties: more failed metrics first), then samples that were not evaluated.

    The first `opened` samples are shown expanded.
    """
    primary = next(iter(summaries), None)
    ordered = sorted(results, key=lambda r: _order_key(r, primary, summaries))
    found = samples or {}
    return [
        _view(i, result, found.get(result.id), open=i < opened) for i, result in enumerate(ordered)
    ]
