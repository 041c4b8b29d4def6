"""The pages of `vera view`, rendered from the run history as HTML strings.

Nothing here knows about HTTP: each page is a method of `Pages` that returns the document or
raises `PageError` with the status and the message to show. The list and compare pages are
this package's templates, styled by the HTML report's own style sheet (plus `view.css`); a
run's page is the HTML report itself, rendered as `vera report` renders it.
"""

from __future__ import annotations

import html
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment
from markupsafe import Markup

from vera._results._comparison import relative_change, significant
from vera._results._outcome import SampleOutcome
from vera._review._review import reviewed_report_html
from vera._store._compare import compare_runs
from vera._store._history import RunStore
from vera._store._records import PAGE_SIZE, DamagedRun, DamagedRunError, RunRecord
from vera._types import MetricComparison, Verdict
from vera._types._errors import ConfigError
from vera._types._report import Counts, Report
from vera._version import __version__
from vera._viewer._review import review_page_values, review_url
from vera.render._html import STYLE, csp_hash, inline_template, template_environment
from vera.render._outputs import TREND_RUNS, stored_thread
from vera.render._samples import OUTCOMES, VERDICTS
from vera.render._view import HistoryPoint, Panel, meets, trend_panels

AGGREGATES_KEPT = 256
"""Finished runs' parsed aggregates the view keeps between pages (the most recent shown)."""
CHANGES_SHOWN = 200
"""The most changed samples the compare page lists, worst first; it says how many more."""
_TIME = "%Y-%m-%d %H:%M:%S"
_SHORT_TIME = "%Y-%m-%d %H:%M"


EXTRA_STYLE = inline_template("vera._viewer", "view.css", "style")
"""What the view's own pages add to the report's style sheet."""


def _policy(styles: str, scripts: str) -> str:
    return (
        f"default-src 'none'; style-src {styles}; script-src {scripts}; img-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


PAGE_POLICY = _policy(f"{csp_hash(STYLE)} {csp_hash(EXTRA_STYLE)}", "'none'")
"""The content security policy of the view's own pages: their two style sheets, no script."""
_REPORT_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def content_security_policy(page: str) -> str:
    """The policy to send with `page`: the view's own, or for a run's HTML report, the one the
    report declares for itself (its style and script by hash) in the same form. Only hashes
    the renderer wrote are taken, never ones computed from the page, so text that somehow
    reached the page as a script would still not run."""
    found = _REPORT_META.search(page[:4096])
    if found is None:
        return PAGE_POLICY
    directives = dict(
        part.strip().split(" ", 1)
        for part in html.unescape(found.group(1)).split(";")
        if " " in part.strip()
    )
    if "style-src" not in directives or "script-src" not in directives:
        raise RuntimeError("the HTML report's policy no longer names its style and script")
    return _policy(directives["style-src"], directives["script-src"])


class PageError(Exception):
    """A page that cannot be shown: the HTTP status, and what to tell the person."""

    def __init__(self, status: int, title: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message
        self.hint = hint


def run_url(run_id: str, sample_id: str | None = None) -> str:
    """A run's page; with `sample_id`, opened at that sample (`#id=`, which the report reads)."""
    url = "/runs/" + quote(run_id, safe="")
    return url if sample_id is None else url + "#id=" + quote(sample_id, safe="")


def conversation_url(run_id: str, conversation_id: str = "") -> str:
    """The page of one conversation of a run, as a thread (with no id: the URL less it)."""
    return run_url(run_id) + "/conversations/" + quote(conversation_id, safe="")


def compare_url(a: str, b: str) -> str:
    return "/compare?" + urlencode({"a": a, "b": b})


def outcome_badge(outcome: SampleOutcome) -> Markup:
    """A sample's badge as the report shows it: a symbol and a colour, and the label."""
    style = OUTCOMES[outcome.outcome]
    return Markup(
        '<span class="badge outcome {}" title="{}"><span aria-hidden="true">{}</span> {}</span>'
    ).format(style.css, outcome.why, style.symbol, outcome.label)


def claim_verdict(verdict: Verdict | None) -> Markup:
    """A claim's verdict badge, or a dash where one run did not make the claim."""
    if verdict is None:
        return Markup('<span class="muted" title="not in this run">—</span>')
    style = VERDICTS[verdict]
    return Markup('<span class="verdict {}"><span aria-hidden="true">{}</span> {}</span>').format(
        style.css, style.symbol, style.label
    )


def _environment() -> Environment:
    env = template_environment("vera._viewer")
    env.filters.update(run_url=run_url)
    env.globals.update(
        css=STYLE,
        extra_css=EXTRA_STYLE,
        version=__version__,
        verdicts=VERDICTS,
        outcome_badge=outcome_badge,
        claim_verdict=claim_verdict,
        compare_url=compare_url,
        trend_runs=TREND_RUNS,
    )
    return env


@dataclass(frozen=True)
class MetricMean:
    """A metric's mean in one run, and whether it meets its threshold."""

    name: str
    mean: float | None
    meets: bool | None
    rule: str
    """The threshold in its direction: "≥ 0.5", "≤ 0"."""


@dataclass(frozen=True)
class RunRow:
    """One run as the list shows it."""

    record: RunRecord
    report: Report | None
    """The stored aggregates (no samples) of a finished run; None for one still running."""

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def finished(self) -> bool:
        return self.report is not None

    @property
    def local_time(self) -> datetime:
        return datetime.fromtimestamp(self.record.created).astimezone()

    @property
    def when(self) -> str:
        return self.local_time.strftime(_TIME)

    @property
    def judge(self) -> str:
        if self.report is not None:
            return self.report.judge
        settings = self.record.options.get("settings")
        judge = settings.get("judge") if isinstance(settings, dict) else None
        return str(judge or self.record.options.get("judge") or "—")

    @property
    def pipeline(self) -> str | None:
        if self.report is not None:
            return self.report.pipeline
        pipeline = self.record.options.get("pipeline")
        return str(pipeline) if pipeline else None

    @property
    def counts(self) -> Counts:
        return self.report.counts if self.report is not None else Counts()

    @property
    def means(self) -> list[MetricMean]:
        if self.report is None:
            return []
        return [
            MetricMean(
                name,
                summary.mean,
                meets(summary.mean, summary),
                f"{'≥' if summary.higher_is_better else '≤'} {summary.threshold:g}",
            )
            for name, summary in self.report.metric_summary.items()
        ]


@dataclass(frozen=True)
class DatasetTrend:
    """A dataset's finished runs, oldest first, and a chart per metric from the second run."""

    dataset: str
    runs: int
    panels: list[Panel]


@dataclass(frozen=True)
class MetricRow:
    """One metric of a comparison, coloured only where the change is significant."""

    name: str
    comparison: MetricComparison
    relative: str | None
    better: bool | None
    """True or False when the paired interval excludes 0; None when the change is noise."""


class Pages:
    """Every page of the view over one run history, opened read-only."""

    def __init__(
        self, store: RunStore, *, page_size: int = PAGE_SIZE, csrf: str | None = None
    ) -> None:
        """`csrf`: the session's token that review forms carry; None keeps the pages
        read-only (no form is shown)."""
        self.store = store
        self.page_size = page_size
        self.csrf = csrf
        self._env = _environment()
        # A finished run's stored aggregates never change, so the most recently shown are
        # kept parsed; only so many, so that browsing a long history keeps memory bounded.
        self._aggregates: OrderedDict[str, Report] = OrderedDict()
        self._kept = threading.Lock()

    def _render(self, template: str, **values: Any) -> str:
        return self._env.get_template(template).render(
            history=self.store.path, writable=self.csrf is not None, **values
        )

    def message(self, error: PageError) -> str:
        """The page for a run that cannot be shown, an unknown address or a bad request."""
        return self._render("message.html.j2", title=error.title, error=error)

    # The list of runs

    def _aggregate(self, record: RunRecord) -> Report | None:
        """A finished run's report without its samples: the list needs its counts and each
        metric's threshold, not thousands of results read back. `DamagedRunError` when its
        stored report cannot be read."""
        if record.status != "finished":
            return None
        with self._kept:
            if record.id in self._aggregates:
                self._aggregates.move_to_end(record.id)
                return self._aggregates[record.id]
        report = self.store.aggregates(record.id)
        if report is None:
            return None
        with self._kept:
            self._aggregates[record.id] = report
            while len(self._aggregates) > AGGREGATES_KEPT:
                self._aggregates.popitem(last=False)
        return report

    def _rows(self, records: Sequence[RunRecord]) -> tuple[list[RunRow], list[DamagedRun]]:
        """`records` as the list shows them, and those whose stored report is damaged."""
        rows: list[RunRow] = []
        damaged: list[DamagedRun] = []
        for record in records:
            try:
                rows.append(RunRow(record, self._aggregate(record)))
            except DamagedRunError as exc:
                damaged.append(exc.run)
        return rows, damaged

    def _newest(self, **where: Any) -> RunRow | None:
        """The newest finished run `where` selects (`RunStore.list`'s filters) that can be
        read, as the compare form names it."""
        records, _ = self.store.select(finished=True, limit=1, **where)
        rows, _ = self._rows(records)
        return rows[0] if rows else None

    def _picks(self) -> tuple[RunRow | None, RunRow | None]:
        """The compare form's default pair: the newest finished run (B) and the one before it
        of its dataset, else the one before it (A)."""
        newest = self._newest()
        if newest is None:
            return None, None
        earlier = self._newest(dataset=newest.record.dataset, before=newest.id) or self._newest(
            before=newest.id
        )
        return earlier or newest, newest

    def runs(self, page: int = 1) -> str:
        """`/`: one page of the runs, newest first, a form to compare two, and the trend of
        each dataset on the page. What it reads is bounded by the page, never the history."""
        listing = self.store.page(page, self.page_size)
        if page > listing.pages:
            raise PageError(
                404,
                "No such page",
                f"The history has {listing.total} runs, {listing.pages} pages of "
                f"{listing.size}; page {page} is past the last.",
            )
        rows, damaged = self._rows(listing.records)
        finished = [row for row in rows if row.finished]
        pick_a, pick_b = self._picks()
        return self._render(
            "runs.html.j2",
            title="Runs",
            listing=listing,
            rows=rows,
            damaged=[*listing.damaged, *damaged],
            choices=_choices(finished, (pick_a, pick_b)),
            pick_a=pick_a.id if pick_a and pick_a is not pick_b else None,
            pick_b=pick_b.id if pick_b else None,
            trends=self._trends(row.record.dataset for row in finished),
            previous_page=page - 1 if page > 1 else None,
            next_page=page + 1 if page < listing.pages else None,
        )

    def _trends(self, datasets: Iterable[str]) -> list[DatasetTrend]:
        """Per dataset, in the order given (each once): its last `TREND_RUNS` finished runs'
        means, oldest first, drawn as the report draws them."""
        trends = []
        for dataset in dict.fromkeys(datasets):
            records, _ = self.store.select(
                dataset=dataset, finished=True, limit=TREND_RUNS, full=True
            )
            rows, _ = self._rows(records)
            if rows:
                trends.append(_trend(dataset, rows))
        return trends

    # One run

    def _record(self, run_id: str) -> RunRecord:
        try:
            return self.store.get(run_id)
        except ConfigError as exc:
            raise PageError(404, "No such run", str(exc)) from None

    def _finished(self, run_id: str) -> RunRecord:
        record = self._record(run_id)
        window = self.store.monitor_window(record.id) if record.status != "finished" else None
        if window is not None:
            # A monitor's window is finished by its monitor, never by --resume (docs/monitor.md).
            raise PageError(
                409,
                f"Run {record.id} is an open monitor window",
                f"Run {record.id} is a window of vera monitor {window[0]!r} that is still "
                f"open ({record.finished_samples} samples evaluated so far): the monitor "
                "stores its report when the window closes, and a monitor that was stopped "
                "closes its past windows when it starts again.",
            )
        if record.status != "finished":
            raise PageError(
                409,
                f"Run {record.id} has not finished",
                f"Run {record.id} of {record.dataset} is {record.status}: "
                f"{record.finished_samples} samples are done, and its report is written when "
                "the run ends. A run whose process was stopped stays unfinished until resumed.",
                hint=f"vera eval --resume {record.id}",
            )
        return record

    def _previous(self, record: RunRecord) -> RunRecord | None:
        """The newest finished run of the same dataset before `record`."""
        previous = self._newest(dataset=record.dataset, before=record.id)
        return previous.record if previous else None

    def run(self, run_id: str) -> str:
        """`/runs/ID`: the run's HTML report, as `vera report` writes it, with links to the
        list and to the comparison with the dataset's previous run."""
        record = self._finished(run_id)
        links = [("All runs", "/"), ("Review: label samples", review_url(record.id))]
        previous = self._previous(record)
        if previous is not None:
            links.append(
                (
                    f"Compare with the previous run ({previous.id})",
                    compare_url(previous.id, record.id),
                )
            )
        try:
            return reviewed_report_html(
                self.store, record.id, links=links, thread_link=conversation_url(record.id)
            )
        except ConfigError as exc:
            raise PageError(409, f"Run {record.id} cannot be shown", str(exc)) from None

    def conversation(self, run_id: str, conversation_id: str) -> str:
        """`/runs/ID/conversations/CID`: one conversation of a run as a thread, every message
        and each assistant turn's claims and verdicts (the run's page shows only the worst
        conversations' threads)."""
        record = self._finished(run_id)
        try:
            thread = stored_thread(self.store, record.id, conversation_id, base=run_url(record.id))
        except ConfigError as exc:
            raise PageError(409, f"Run {record.id} cannot be shown", str(exc)) from None
        if thread is None:
            raise PageError(
                404,
                "No such conversation",
                f"Run {record.id} has no conversation {conversation_id!r}; its page lists "
                "its conversations.",
            )
        return self._render(
            "conversation.html.j2",
            title=f"Conversation {conversation_id}",
            record=record,
            thread=thread,
        )

    def review(self, run_id: str, queue: str, *, reviewer: str = "", saved: str = "") -> str:
        """`/review/ID?queue=calibration|triage`: the queue's next samples to label (a form
        each when the view takes labels), the labels so far and the calibration they give."""
        record = self._finished(run_id)
        try:
            values = review_page_values(self.store, record.id, queue)
        except ConfigError as exc:
            raise PageError(400, "Bad request", str(exc)) from None
        return self._render(
            "review.html.j2",
            title=f"Review {record.id}",
            csrf=self.csrf or "",
            reviewer=reviewer,
            saved=saved,
            **values,
        )

    # Two runs compared

    def compare(self, a: str | None, b: str | None) -> str:
        """`/compare?a=A&b=B`: run B against run A, metric by metric, what differs between the
        runs' judges, metrics and thresholds, and the samples whose verdicts or scores changed,
        worst first."""
        if not a or not b:
            raise PageError(
                400,
                "Choose two runs",
                "Comparing needs two runs: /compare?a=RUN_A&b=RUN_B (B is compared against A). "
                "The list of runs has a form that picks them.",
            )
        first, second = self._finished(a), self._finished(b)
        try:
            compared = compare_runs(
                self.store, first.id, second.id, top=0, changes=CHANGES_SHOWN, other_dataset="means"
            )
        except DamagedRunError as exc:
            raise PageError(409, "These runs cannot be compared", str(exc)) from None
        before, after, found = compared.before, compared.after, compared.comparison
        pairs = compared.paired
        rows = _metric_rows(after, found.metrics) if pairs else _means_only(after, before)
        return self._render(
            "compare.html.j2",
            title=f"{second.id} against {first.id}",
            a=RunRow(first, before),
            b=RunRow(second, after),
            pairs=pairs,
            differences=compared.differences,
            metrics=rows,
            paired=max((row.comparison.paired_samples for row in rows), default=0),
            changes=list(found.changes),
            more=max(found.changed - CHANGES_SHOWN, 0),
            worse=found.worse,
            better=found.better,
            total=found.changed,
        )


def _choices(finished: Sequence[RunRow], picks: Iterable[RunRow | None]) -> list[RunRow]:
    """The compare form's runs: the page's finished runs, and the default picks if elsewhere
    (the form never lists the whole history)."""
    choices = list(finished)
    shown = {row.id for row in choices}
    for pick in picks:
        if pick is not None and pick.id not in shown:
            choices.append(pick)
            shown.add(pick.id)
    return choices


def _trend(dataset: str, rows: Sequence[RunRow]) -> DatasetTrend:
    """A dataset's trend from its finished runs, newest first."""
    # Labelled by time, not by run id: two ids side by side overrun a chart this narrow.
    points = [
        HistoryPoint(r.local_time.strftime(_SHORT_TIME), r.when, r.record.metrics)
        for r in reversed(rows)
    ]
    newest = rows[0].report
    assert newest is not None  # only finished rows are given
    return DatasetTrend(dataset, len(rows), trend_panels(newest, points))


def _metric_rows(after: Report, compared: dict[str, MetricComparison]) -> list[MetricRow]:
    rows = []
    for name, comparison in compared.items():
        better = None
        if significant(comparison) and comparison.difference is not None:
            higher = after.metric_summary[name].higher_is_better
            better = (comparison.difference > 0) == higher
        relative = relative_change(comparison.system_mean, comparison.baseline_mean)
        rows.append(MetricRow(name, comparison, relative, better))
    return rows


def _means_only(after: Report, before: Report) -> list[MetricRow]:
    """Runs of different datasets: each metric's two means, and nothing paired."""
    rows = []
    for name, summary in after.metric_summary.items():
        other = before.metric_summary.get(name)
        if other is None:
            continue
        comparison = MetricComparison(
            system_mean=summary.mean,
            baseline_mean=other.mean,
            difference=None,
            ci_low=None,
            ci_high=None,
            p_value=None,
            paired_samples=0,
            improvement=None,
        )
        rows.append(MetricRow(name, comparison, None, None))
    return rows
