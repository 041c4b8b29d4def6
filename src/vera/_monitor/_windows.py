"""Windows: which one a moment falls in, a window's report from its stored results, and the
alerts checked when it closes (printed, stored, and posted to a webhook)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from vera._monitor._config import AlertRule
from vera._results._builder import ReportBuilder
from vera._store._history import RunStore
from vera._types._report import Report
from vera._types._secrets import redact
from vera._version import __version__
from vera.metrics._registry import create_metric

WEBHOOK_TIMEOUT = 5.0


def window_bounds(moment: float, seconds: int) -> tuple[float, float]:
    """The window of `seconds` holding `moment` (windows are aligned to UTC midnight)."""
    start = moment - moment % seconds
    return start, start + seconds


def window_report(runs: RunStore, run_id: str, judge_details: dict[str, Any] | None) -> Report:
    """A window's report from the results stored for it, by the same builder as a run's."""
    plan = runs.plan(run_id)
    record = runs.get(run_id)
    metrics = [create_metric(m.name, **m.options) for m in plan.metrics]
    builder = ReportBuilder(
        {m.name: m.threshold for m in metrics},
        lower_is_better=[m.name for m in metrics if not m.higher_is_better],
    )
    for result in runs.iter_results(run_id):
        builder.add(result)
    return builder.build(
        dataset=record.dataset,
        judge=plan.settings.judge,
        judge_details=judge_details,
        version=__version__,
        started=datetime.fromtimestamp(record.created, UTC),
    )


@dataclass(frozen=True)
class Alert:
    rule: AlertRule
    mean: float | None
    message: str


def window_alerts(report: Report, rules: Sequence[AlertRule], label: str) -> list[Alert]:
    """The rules a closed window breaks. A window where a rule's metric scored nothing raises
    its alert too: it measured nothing, which must not read as healthy."""
    alerts = []
    for rule in rules:
        summary = report.metric_summary.get(rule.metric)
        mean = summary.mean if summary is not None else None
        if mean is None:
            alerts.append(
                Alert(
                    rule,
                    None,
                    f"{label}: {rule.metric} scored no trace, so {rule} cannot "
                    "be checked (nothing received, kept or evaluated: see the window's counts)",
                )
            )
        elif rule.breached(mean):
            alerts.append(Alert(rule, mean, f"{label}: {rule.metric} is {mean:.3f} ({rule})"))
    return alerts


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed: urllib would send the alert on as a GET, perhaps to
    another host, and a 3xx is not the hook accepting it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def post_webhook(url: str, payload: dict[str, Any]) -> str:
    """POST `payload` as JSON; what happened, in words (never the URL, which may hold a
    token). A redirect is answered as failed, not followed."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json", "User-Agent": f"vera/{__version__}"},
        method="POST",
    )
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(request, timeout=WEBHOOK_TIMEOUT) as answer:
            return f"sent: HTTP {answer.status}"
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            return f"failed: HTTP {exc.code} (a redirect, not followed)"
        return f"failed: HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"failed: {redact(str(getattr(exc, 'reason', exc)))}"
