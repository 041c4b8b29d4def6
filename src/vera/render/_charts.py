"""Inline SVG charts for the HTML report, built in Python so the report needs no script.

Every builder returns `Markup` for an `<svg>` element inline in HTML, where it needs no
namespace declaration (so the page names no URL at all). Each fragment is assembled with
`Markup.format`, which escapes every argument that is not already `Markup`, so a category or
metric name taken from a dataset can never inject markup. Colours come from CSS classes
(`pass`, `fail`, `system`, `baseline`…) that the report's stylesheet defines; no `style`
attribute is written, so the report's content security policy can forbid inline styles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from vera._stats._stats import ValueCounts

DASH = "\N{EN DASH}"

LABEL_CHARS = 22
"""Longer labels are cut with an ellipsis; the full text stays in the element's tooltip."""


@dataclass(frozen=True)
class Bar:
    """One horizontal bar: a label, a value (None: nothing to draw) and an optional interval."""

    label: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""
    """Extra text for the tooltip, such as the number of samples."""
    kind: str = ""
    """A CSS class for the bar, e.g. "system" or "baseline"."""


def domain(values: Sequence[float | None]) -> tuple[float, float]:
    """The axis range: 0 to 1 for scores, widened to take any value outside it."""
    present = [v for v in values if v is not None]
    low = min([0.0, *present])
    high = max([1.0, *present])
    return low, high if high > low else low + 1.0


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _short(label: str, limit: int = LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _svg(width: int, height: int, label: str, body: Markup, css: str = "chart") -> Markup:
    return Markup(
        '<svg class="{}" viewBox="0 0 {} {}" role="img" aria-label="{}"><title>{}</title>{}</svg>'
    ).format(css, width, height, label, label, body)


def _meets(value: float, threshold: float, higher_is_better: bool) -> bool:
    return value >= threshold if higher_is_better else value <= threshold


@dataclass(frozen=True)
class _Frame:
    """A chart's size and the margins its plot area leaves for ticks and labels."""

    width: int
    height: int
    top: int
    bottom: int
    left: int
    right: int

    @property
    def plot_w(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> int:
        return self.height - self.top - self.bottom

    @property
    def base(self) -> int:
        """The y of the plot area's bottom edge, where the axis line runs."""
        return self.top + self.plot_h

    def axis(self) -> Markup:
        return Markup('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>').format(
            self.left, self.base, self.width - self.right, self.base
        )

    def x_scale(self, low: float, high: float) -> Callable[[float], float]:
        """The x of a value on a horizontal axis running from `low` to `high`."""

        def at(value: float) -> float:
            return self.left + self.plot_w * (value - low) / (high - low)

        return at

    def y_scale(self, low: float, high: float) -> Callable[[float], float]:
        """The y of a value on a vertical axis with `low` at the bottom and `high` at the top."""

        def at(value: float) -> float:
            return self.top + self.plot_h * (high - value) / (high - low)

        return at


_HISTOGRAM = _Frame(width=260, height=130, top=16, bottom=22, left=8, right=8)
_TREND = _Frame(width=260, height=120, top=10, bottom=22, left=30, right=10)
TREND_CHARS = 16
"""The most characters of the first and last runs' labels under a trend chart: two fit its
width side by side (a run id is 22); each point's tooltip has the whole label."""
_BAR_ROW_H = 22


def _tick(x: float, y: int, anchor: str, text: str) -> Markup:
    return Markup('<text class="tick" x="{:.1f}" y="{}" text-anchor="{}">{}</text>').format(
        x, y, anchor, text
    )


def _vertical_threshold(x: float, y1: int, y2: int, threshold: float) -> Markup:
    return Markup(
        '<line class="threshold" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}">'
        "<title>threshold {}</title></line>"
    ).format(x, y1, x, y2, _fmt(threshold))


def histogram(
    scores: ValueCounts | Sequence[float],
    *,
    threshold: float | None = None,
    higher_is_better: bool = True,
    bins: int = 10,
    title: str = "",
) -> Markup:
    """Counts of `scores` in `bins` equal bins over their domain (0 to 1 for scores).

    A bin is drawn in the pass colour when its midpoint meets `threshold` in the metric's
    direction; a dashed line marks the threshold itself.
    """
    counted = scores if isinstance(scores, ValueCounts) else ValueCounts(scores)
    low, high = domain([counted.smallest, counted.largest] if counted else [])
    counts = _bin_counts(counted, low, high, bins)
    parts = _histogram_bins(counts, low, high, threshold, higher_is_better)
    parts += _histogram_axis(low, high, threshold)
    label = f"{title or 'score distribution'}: {len(scores)} scored samples"
    return _svg(_HISTOGRAM.width, _HISTOGRAM.height, label, Markup("").join(parts))


def _bin_counts(scores: ValueCounts, low: float, high: float, bins: int) -> list[int]:
    """How many of `scores` fall in each of `bins` equal bins from `low` to `high`."""
    counts = [0] * bins
    for score, count in scores.items():
        index = int((score - low) / (high - low) * bins)
        # A score equal to `high` would index one past the last bin: it belongs in the last.
        counts[min(max(index, 0), bins - 1)] += count
    return counts


def _histogram_bins(
    counts: Sequence[int],
    low: float,
    high: float,
    threshold: float | None,
    higher_is_better: bool,
) -> list[Markup]:
    """A bar per bin, scaled to the tallest, with its count above it when there is one."""
    frame, bins = _HISTOGRAM, len(counts)
    tallest = max(counts, default=0) or 1
    step = frame.plot_w / bins
    parts: list[Markup] = []
    for i, count in enumerate(counts):
        start, end = low + (high - low) * i / bins, low + (high - low) * (i + 1) / bins
        bar_h = frame.plot_h * count / tallest
        x, y = frame.left + i * step, frame.top + frame.plot_h - bar_h
        state = ""
        if threshold is not None:
            state = "pass" if _meets((start + end) / 2, threshold, higher_is_better) else "fail"
        tip = f"{_fmt(start)}{DASH}{_fmt(end)}: {count} sample{'s' if count != 1 else ''}"
        parts.append(
            Markup(
                '<rect class="bar {}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}">'
                "<title>{}</title></rect>"
            ).format(state, x + 1, y, step - 2, bar_h, tip)
        )
        if count:
            parts.append(
                Markup('<text class="count" x="{:.1f}" y="{:.1f}">{}</text>').format(
                    x + step / 2, y - 3, count
                )
            )
    return parts


def _histogram_axis(low: float, high: float, threshold: float | None) -> list[Markup]:
    """The axis with ticks at both ends and the middle, and the threshold when it is in range."""
    frame = _HISTOGRAM
    at = frame.x_scale(low, high)
    parts = [frame.axis()]
    for value, anchor in ((low, "start"), ((low + high) / 2, "middle"), (high, "end")):
        parts.append(_tick(at(value), frame.height - 6, anchor, _fmt(value)))
    if threshold is not None and low <= threshold <= high:
        parts.append(_vertical_threshold(at(threshold), frame.top - 4, frame.base, threshold))
    return parts


def bar_panel(
    bars: Sequence[Bar], *, threshold: float | None = None, title: str = "", label_width: int = 130
) -> Markup:
    """Horizontal bars, one per row, with value labels, interval whiskers and a threshold line."""
    top, bottom = 6, 18
    # An empty panel keeps one row's height so that its axis still has somewhere to go.
    height = top + bottom + _BAR_ROW_H * max(len(bars), 1)
    frame = _Frame(width=420, height=height, top=top, bottom=bottom, left=label_width, right=46)
    low, high = domain(
        [v for bar in bars for v in (bar.value, bar.ci_low, bar.ci_high)]
        + ([threshold] if threshold is not None else [])
    )
    at = frame.x_scale(low, high)
    origin = at(max(low, 0.0))
    parts: list[Markup] = []
    for i, bar in enumerate(bars):
        parts += _bar_row(bar, frame.top + i * _BAR_ROW_H, frame, at, origin)
    parts.append(frame.axis())
    for value, anchor in ((low, "start"), (high, "end")):
        parts.append(_tick(at(value), frame.base + 13, anchor, _fmt(value)))
    if threshold is not None:
        parts.append(_vertical_threshold(at(threshold), frame.top, frame.base, threshold))
    return _svg(frame.width, frame.height, title or "bar chart", Markup("").join(parts))


def _bar_row(
    bar: Bar, y: int, frame: _Frame, at: Callable[[float], float], origin: float
) -> list[Markup]:
    """One row of a bar panel: the label, then the bar from `origin`, its whisker and its
    value, or "n/a" when the bar has no value."""
    mid = y + _BAR_ROW_H / 2
    tip = bar.label + (f" ({bar.note})" if bar.note else "")
    parts = [
        Markup(
            '<text class="label" x="{}" y="{:.1f}" text-anchor="end">{}<title>{}</title></text>'
        ).format(frame.left - 6, mid + 4, _short(bar.label), tip)
    ]
    if bar.value is None:
        parts.append(
            Markup('<text class="value none" x="{:.1f}" y="{:.1f}">n/a</text>').format(
                frame.left + 4, mid + 4
            )
        )
        return parts
    start, end = sorted((origin, at(bar.value)))
    parts.append(
        Markup(
            '<rect class="bar {}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}">'
            "<title>{}: {:.3f}</title></rect>"
        ).format(bar.kind, start, y + 4, max(end - start, 1.0), _BAR_ROW_H - 8, tip, bar.value)
    )
    if bar.ci_low is not None and bar.ci_high is not None:
        parts.append(_whisker(bar.ci_low, bar.ci_high, mid, at))
    parts.append(
        Markup('<text class="value" x="{}" y="{:.1f}">{:.3f}</text>').format(
            frame.width - frame.right + 6, mid + 4, bar.value
        )
    )
    return parts


def _whisker(ci_low: float, ci_high: float, mid: float, at: Callable[[float], float]) -> Markup:
    """The 95 % interval as a horizontal line at `mid`, capped at both ends."""
    x_low, x_high = at(ci_low), at(ci_high)
    return Markup(
        '<path class="whisker" d="M{:.1f} {:.1f}H{:.1f}M{:.1f} {:.1f}V{:.1f}'
        'M{:.1f} {:.1f}V{:.1f}"><title>95% CI {:.3f}{}{:.3f}</title></path>'
    ).format(
        x_low, mid, x_high, x_low, mid - 4, mid + 4, x_high, mid - 4, mid + 4, ci_low, DASH, ci_high
    )


def trend_chart(
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    threshold: float | None = None,
    title: str = "",
) -> Markup:
    """A metric's mean over successive runs: points joined by a line, gaps where it is None."""
    frame = _TREND
    low, high = domain([*values, *([threshold] if threshold is not None else [])])
    count = len(values)

    def x_at(i: int) -> float:
        # A single run has no spread to show: it sits in the middle.
        return frame.left + (frame.plot_w * i / (count - 1) if count > 1 else frame.plot_w / 2)

    y_at = frame.y_scale(low, high)
    parts = _trend_axes(low, high, threshold, y_at)
    path = _trend_path(values, x_at, y_at)
    if path:
        parts.append(Markup('<path class="line" d="{}"/>').format(path))
    parts += _trend_points(labels, values, x_at, y_at)
    if labels:
        for i, anchor in ((0, "start"), (count - 1, "end")):
            parts.append(_tick(x_at(i), frame.height - 6, anchor, _short(labels[i], TREND_CHARS)))
    return _svg(frame.width, frame.height, title or "trend", Markup("").join(parts))


def _trend_axes(
    low: float, high: float, threshold: float | None, y_at: Callable[[float], float]
) -> list[Markup]:
    """The value ticks at both ends, the time axis, and the threshold as a horizontal line."""
    frame = _TREND
    parts = [
        Markup('<text class="tick" x="{}" y="{:.1f}" text-anchor="end">{}</text>').format(
            frame.left - 4, y_at(value) + 4, _fmt(value)
        )
        for value in (low, high)
    ]
    parts.append(frame.axis())
    if threshold is not None:
        parts.append(
            Markup(
                '<line class="threshold" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}">'
                "<title>threshold {}</title></line>"
            ).format(
                frame.left,
                y_at(threshold),
                frame.width - frame.right,
                y_at(threshold),
                _fmt(threshold),
            )
        )
    return parts


def _trend_path(
    values: Sequence[float | None],
    x_at: Callable[[int], float],
    y_at: Callable[[float], float],
) -> str:
    """SVG path data for the line: one subpath per run of values, so a None leaves a gap
    rather than a line bridging the missing run."""
    segment: list[str] = []
    paths: list[str] = []
    for i, point in enumerate(values):
        if point is None:
            if segment:
                paths.append("M" + "L".join(segment))
            segment = []
            continue
        segment.append(f"{x_at(i):.1f} {y_at(point):.1f}")
    if segment:
        paths.append("M" + "L".join(segment))
    return " ".join(paths)


def _trend_points(
    labels: Sequence[str],
    values: Sequence[float | None],
    x_at: Callable[[int], float],
    y_at: Callable[[float], float],
) -> list[Markup]:
    """A marker per run with a value, its tooltip naming the run."""
    return [
        Markup(
            '<circle class="point" cx="{:.1f}" cy="{:.1f}" r="3"><title>{}: {:.3f}</title></circle>'
        ).format(x_at(i), y_at(point), label, point)
        for i, (label, point) in enumerate(zip(labels, values, strict=True))
        if point is not None
    ]


def range_bar(
    mean: float | None,
    ci_low: float | None,
    ci_high: float | None,
    *,
    threshold: float,
    title: str = "",
) -> Markup:
    """A thin 0 to 1 track with the 95 % interval as a band, the mean as a tick and the threshold
    as a marker: the picture on a summary card."""
    width, height, pad = 200, 18, 4
    low, high = domain([mean, ci_low, ci_high, threshold])

    def at(value: float) -> float:
        return pad + (width - 2 * pad) * (value - low) / (high - low)

    parts = [Markup('<line class="track" x1="{}" y1="9" x2="{}" y2="9"/>').format(pad, width - pad)]
    if ci_low is not None and ci_high is not None:
        parts.append(
            Markup('<rect class="band" x="{:.1f}" y="4" width="{:.1f}" height="10"/>').format(
                at(ci_low), max(at(ci_high) - at(ci_low), 1.0)
            )
        )
    if mean is not None:
        parts.append(
            Markup('<rect class="mean" x="{:.1f}" y="1" width="3" height="16"/>').format(
                at(mean) - 1.5
            )
        )
    parts.append(Markup('<path class="marker" d="M{:.1f} 0l4 0-4 6-4-6z"/>').format(at(threshold)))
    return _svg(width, height, title or "mean and interval", Markup("").join(parts), "range")
