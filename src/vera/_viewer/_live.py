"""`vera view`'s live page of `vera monitor`'s windows: per monitor, a trend per metric (the
mean with its 95 % interval, window by window), what each window received, kept, dropped and
evaluated, and its alerts. The page fetches its own body again every few seconds
(`/monitor?part=windows`), so it refreshes without reloading.

Routes of their own (`live_routes`), registered beside the view's pages; read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from vera._monitor import StoredWindow, read_windows
from vera._monitor._windows import window_report
from vera._store._history import RunStore
from vera._types import Report
from vera._types._errors import VeraError
from vera._version import __version__
from vera._viewer._pages import EXTRA_STYLE
from vera.render._html import STYLE, csp_hash, template_environment

REFRESH_SECONDS = 5
WINDOWS_SHOWN = 48
"""The newest windows of each monitor the page shows."""

LIVE_SCRIPT = (
    "(function(){var box=document.getElementById('live');if(!box){return;}"
    "var stamp=document.getElementById('refreshed');"
    "function load(){fetch('/monitor?part=windows',{credentials:'same-origin',cache:'no-store'})"
    ".then(function(r){if(!r.ok){throw new Error('HTTP '+r.status);}return r.text();})"
    ".then(function(t){box.innerHTML=t;box.dataset.refreshes=String(Number(box.dataset.refreshes"
    "||'0')+1);if(stamp){stamp.textContent=new Date().toLocaleTimeString();}})"
    ".catch(function(e){if(stamp){stamp.textContent='not refreshed: '+e.message;}});}"
    f"setInterval(load,{REFRESH_SECONDS * 1000});}})();"
)
"""The page's one script (allowed by its hash): fetch the windows' part, put it in place."""

_POLICY = (
    f"default-src 'none'; style-src {csp_hash(STYLE)} {csp_hash(EXTRA_STYLE)}; "
    f"script-src {csp_hash(LIVE_SCRIPT)}; connect-src 'self'; img-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_PART_POLICY = "default-src 'none'; frame-ancestors 'none'"


@dataclass(frozen=True)
class _Point:
    """One window on a metric's trend."""

    window: StoredWindow
    mean: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class _Trend:
    metric: str
    points: list[_Point]

    def y(self, value: float) -> float:
        """The SVG height of a score from 0 to 1 (the plot is 100 high, 0 at the bottom)."""
        return round(100 - 100 * max(0.0, min(1.0, value)), 2)


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M")


class _Live:
    def __init__(self, store: RunStore, writable: bool) -> None:
        self.store = store
        self.writable = writable  # what the footer says: `vera view --review` writes labels
        env: Environment = template_environment("vera._viewer")
        env.globals.update(css=STYLE, extra_css=EXTRA_STYLE, version=__version__)
        env.filters.update(when=_when)
        self.env = env

    def _report(self, window: StoredWindow) -> Report:
        """The window's report: stored once closed, else from the results stored so far."""
        report = self.store.aggregates(window.run_id) if window.closed else None
        return report or window_report(self.store, window.run_id, None)

    def monitors(self) -> list[dict[str, Any]]:
        windows = read_windows(self.store.path, limit=10_000)
        names = sorted({w.monitor for w in windows})
        shown = []
        for name in names:
            own = [w for w in windows if w.monitor == name][-WINDOWS_SHOWN:]
            reports = [self._report(w) for w in own]
            summaries = [dict(r.metric_summary) for r in reports]
            # Each window's answer verdicts: "3 of 40", unfaithful of judged.
            answers = {w.run_id: r.answers for w, r in zip(own, reports, strict=True)}
            metrics = sorted({m for s in summaries for m in s})
            trends = [
                _Trend(
                    metric,
                    [
                        _Point(w, s[metric].mean, s[metric].ci_low, s[metric].ci_high)
                        if metric in s
                        else _Point(w, None, None, None)
                        for w, s in zip(own, summaries, strict=True)
                    ],
                )
                for metric in metrics
            ]
            shown.append({"name": name, "windows": own[::-1], "trends": trends, "answers": answers})
        return shown

    def render(self, part: bool) -> str:
        template = "monitor_windows.html.j2" if part else "monitor.html.j2"
        return self.env.get_template(template).render(
            history=self.store.path,
            writable=self.writable,
            title="Live monitors",
            monitors=self.monitors(),
            script=LIVE_SCRIPT,
            refresh=REFRESH_SECONDS,
        )

    def page(self, request: Request) -> Response:
        part = request.query_params.get("part") == "windows"
        try:
            body = self.render(part)
        except VeraError as exc:
            return Response(str(exc), status_code=503, media_type="text/plain")
        policy = _PART_POLICY if part else _POLICY
        return HTMLResponse(body, headers={"Content-Security-Policy": policy})


def live_routes(store: RunStore, *, writable: bool = False) -> list[Route]:
    """The live page's routes over the view's (read-only) store; `writable`: the view was
    started with `--review` (the page itself writes nothing)."""
    live = _Live(store, writable)
    return [Route("/monitor", live.page, methods=["GET"])]
