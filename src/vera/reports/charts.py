"""Inline SVG charts for the HTML report, built in Python so the report needs no script.

Every builder returns `Markup` for an `<svg>` element inline in HTML, where it needs no
namespace declaration (so the page names no URL at all). Each fragment is assembled with
`Markup.format`, which escapes every argument that is not already `Markup`, so a category or
metric name taken from a dataset can never inject markup. Colours come from CSS classes
(`pass`, `fail`, `system`, `baseline`…) that the report's stylesheet defines; no `style`
attribute is written, so the report's content security policy can forbid inline styles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["Bar", "bar_panel", "domain", "histogram", "range_bar", "trend_chart"]

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


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _svg(width: int, height: int, label: str, body: Markup, css: str = "chart") -> Markup:
    return Markup(
        '<svg class="{}" viewBox="0 0 {} {}" role="img" aria-label="{}"><title>{}</title>{}</svg>'
    ).format(css, width, height, label, label, body)


def _meets(value: float, threshold: float, higher_is_better: bool) -> bool:
    return value >= threshold if higher_is_better else value <= threshold


def histogram(
    scores: Sequence[float],
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
    width, height, top, bottom, left, right = 260, 130, 16, 22, 8, 8
    low, high = domain(list(scores))
    counts = [0] * bins
    for score in scores:
        index = int((score - low) / (high - low) * bins)
        counts[min(max(index, 0), bins - 1)] += 1
    tallest = max(counts, default=0) or 1
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / bins
    parts: list[Markup] = []
    for i, count in enumerate(counts):
        start, end = low + (high - low) * i / bins, low + (high - low) * (i + 1) / bins
        bar_h = plot_h * count / tallest
        x, y = left + i * step, top + plot_h - bar_h
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
    base = top + plot_h
    parts.append(
        Markup('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>').format(
            left, base, width - right, base
        )
    )
    for value, anchor in ((low, "start"), ((low + high) / 2, "middle"), (high, "end")):
        x = left + plot_w * (value - low) / (high - low)
        parts.append(
            Markup('<text class="tick" x="{:.1f}" y="{}" text-anchor="{}">{}</text>').format(
                x, height - 6, anchor, _fmt(value)
            )
        )
    if threshold is not None and low <= threshold <= high:
        x = left + plot_w * (threshold - low) / (high - low)
        parts.append(
            Markup(
                '<line class="threshold" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}">'
                "<title>threshold {}</title></line>"
            ).format(x, top - 4, x, base, _fmt(threshold))
        )
    label = title or "score distribution"
    return _svg(width, height, f"{label}: {len(scores)} scored samples", Markup("").join(parts))


def bar_panel(
    bars: Sequence[Bar], *, threshold: float | None = None, title: str = "", label_width: int = 130
) -> Markup:
    """Horizontal bars, one per row, with value labels, interval whiskers and a threshold line."""
    row_h, top, bottom, value_w = 22, 6, 18, 46
    width = 420
    height = top + bottom + row_h * max(len(bars), 1)
    low, high = domain(
        [v for bar in bars for v in (bar.value, bar.ci_low, bar.ci_high)]
        + ([threshold] if threshold is not None else [])
    )
    plot_x, plot_w = label_width, width - label_width - value_w

    def at(value: float) -> float:
        return plot_x + plot_w * (value - low) / (high - low)

    parts: list[Markup] = []
    for i, bar in enumerate(bars):
        y = top + i * row_h
        tip = bar.label + (f" ({bar.note})" if bar.note else "")
        parts.append(
            Markup(
                '<text class="label" x="{}" y="{:.1f}" text-anchor="end">{}<title>{}</title></text>'
            ).format(plot_x - 6, y + row_h / 2 + 4, _short(bar.label), tip)
        )
        if bar.value is None:
            parts.append(
                Markup('<text class="value none" x="{:.1f}" y="{:.1f}">n/a</text>').format(
                    plot_x + 4, y + row_h / 2 + 4
                )
            )
            continue
        start, end = sorted((at(max(low, 0.0)), at(bar.value)))
        parts.append(
            Markup(
                '<rect class="bar {}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}">'
                "<title>{}: {:.3f}</title></rect>"
            ).format(bar.kind, start, y + 4, max(end - start, 1.0), row_h - 8, tip, bar.value)
        )
        if bar.ci_low is not None and bar.ci_high is not None:
            mid = y + row_h / 2
            parts.append(
                Markup(
                    '<path class="whisker" d="M{:.1f} {:.1f}H{:.1f}M{:.1f} {:.1f}V{:.1f}'
                    'M{:.1f} {:.1f}V{:.1f}"><title>95% CI {:.3f}{}{:.3f}</title></path>'
                ).format(
                    at(bar.ci_low),
                    mid,
                    at(bar.ci_high),
                    at(bar.ci_low),
                    mid - 4,
                    mid + 4,
                    at(bar.ci_high),
                    mid - 4,
                    mid + 4,
                    bar.ci_low,
                    DASH,
                    bar.ci_high,
                )
            )
        parts.append(
            Markup('<text class="value" x="{}" y="{:.1f}">{:.3f}</text>').format(
                width - value_w + 6, y + row_h / 2 + 4, bar.value
            )
        )
    base = top + row_h * max(len(bars), 1)
    parts.append(
        Markup('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>').format(
            plot_x, base, plot_x + plot_w, base
        )
    )
    for value, anchor in ((low, "start"), (high, "end")):
        parts.append(
            Markup('<text class="tick" x="{:.1f}" y="{}" text-anchor="{}">{}</text>').format(
                at(value), base + 13, anchor, _fmt(value)
            )
        )
    if threshold is not None:
        parts.append(
            Markup(
                '<line class="threshold" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}">'
                "<title>threshold {}</title></line>"
            ).format(at(threshold), top, at(threshold), base, _fmt(threshold))
        )
    return _svg(width, height, title or "bar chart", Markup("").join(parts))


def trend_chart(
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    threshold: float | None = None,
    title: str = "",
) -> Markup:
    """A metric's mean over successive runs: points joined by a line, gaps where it is None."""
    width, height, top, bottom, left, right = 260, 120, 10, 22, 30, 10
    low, high = domain([*values, *([threshold] if threshold is not None else [])])
    plot_w, plot_h = width - left - right, height - top - bottom
    count = len(values)

    def x_at(i: int) -> float:
        return left + (plot_w * i / (count - 1) if count > 1 else plot_w / 2)

    def y_at(value: float) -> float:
        return top + plot_h * (high - value) / (high - low)

    parts: list[Markup] = []
    for value in (low, high):
        parts.append(
            Markup('<text class="tick" x="{}" y="{:.1f}" text-anchor="end">{}</text>').format(
                left - 4, y_at(value) + 4, _fmt(value)
            )
        )
    parts.append(
        Markup('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>').format(
            left, top + plot_h, width - right, top + plot_h
        )
    )
    if threshold is not None:
        parts.append(
            Markup(
                '<line class="threshold" x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}">'
                "<title>threshold {}</title></line>"
            ).format(left, y_at(threshold), width - right, y_at(threshold), _fmt(threshold))
        )
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
    if paths:
        parts.append(Markup('<path class="line" d="{}"/>').format(" ".join(paths)))
    for i, (label, point) in enumerate(zip(labels, values, strict=True)):
        if point is not None:
            parts.append(
                Markup(
                    '<circle class="point" cx="{:.1f}" cy="{:.1f}" r="3">'
                    "<title>{}: {:.3f}</title></circle>"
                ).format(x_at(i), y_at(point), label, point)
            )
    if labels:
        for i, anchor in ((0, "start"), (count - 1, "end")):
            parts.append(
                Markup('<text class="tick" x="{:.1f}" y="{}" text-anchor="{}">{}</text>').format(
                    x_at(i), height - 6, anchor, _short(labels[i])
                )
            )
    return _svg(width, height, title or "trend", Markup("").join(parts))


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
