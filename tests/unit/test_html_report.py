"""The HTML report, rendered from real `vera.evaluate` reports with the offline judge."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from functools import cache
from html.parser import HTMLParser

import pytest

import vera
from vera.comparison import baseline_comparison
from vera.errors import RunStopError
from vera.judges import OfflineJudge
from vera.report import ClaimRecord, Report, SampleStatus
from vera.reports import HistoryPoint, render_html
from vera.reports.charts import Bar, bar_panel, histogram
from vera.reports.samples import VERDICTS
from vera.runner import run_pass
from vera.types import Claim, Sample

SCRIPT = '<script>document.title = window.__pwned = "pwned"</script>'
IMG = '"><img src=x onerror="window.__pwned = 2">'


# A small DOM, enough to ask what a browser would build from the page.
VOID = {"meta", "link", "br", "hr", "img", "input", "wbr", "source", "area", "col", "embed"}
SVG_VOID = {"line", "rect", "path", "circle"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> list[Node]:
        found = [self]
        for child in self.children:
            if isinstance(child, Node):
                found += child.iter()
        return found

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.classes)
            and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.node = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.node)
        self.node.children.append(node)
        if tag not in VOID:
            self.node = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.node.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.node))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.node
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.node = node.parent

    def handle_data(self, data: str) -> None:
        self.node.children.append(data)


def parse(html: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    assert builder.node is builder.root, f"unclosed <{builder.node.tag}>"
    return builder.root


# Reports to render.
ALL_METRICS = list(vera.metrics.METRICS)


def metrics() -> list[vera.metrics.Metric]:
    return [vera.metrics.create_metric(name) for name in ALL_METRICS]


@cache
def example() -> tuple[Report, dict[str, Sample]]:
    data = list(vera.load_dataset("example"))
    return vera.evaluate(data, metrics(), dataset_name="example"), {s.id: s for s in data}


def hostile_sample() -> Sample:
    return Sample(
        id="q-" + IMG,
        query="How long is the refund window? " + SCRIPT,
        response=f"The refund window is 30 days {SCRIPT}. Refunds are paid by {IMG} transfer.",
        contexts=[f"The refund window is 30 days {SCRIPT}. Refunds are paid by {IMG} transfer."],
        category="billing " + SCRIPT,
    )


class StoppingJudge(OfflineJudge):
    """The offline judge, except that one response fails and another stops the run."""

    def __init__(self, *, fail_on: str, stop_on: str) -> None:
        super().__init__()
        self.fail_on, self.stop_on = fail_on, stop_on

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        if response == self.fail_on:
            raise RuntimeError("the judge's reply could not be read")
        if response == self.stop_on:
            raise RunStopError("the API key was rejected (401)")
        return await super().extract_claims(response, query=query)


def render(
    report: Report,
    samples: Mapping[str, Sample] | None = None,
    history: Sequence[HistoryPoint] = (),
) -> tuple[str, Node]:
    html = render_html(report, samples=samples, history=history)
    return html, parse(html)


def samples_in(doc: Node) -> list[Node]:
    return doc.find_all("article", "sample")


# The tests.
def test_a_card_per_metric_with_mean_interval_and_gate() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    cards = doc.find_all("article", "card")
    assert [c.attrs["data-metric"] for c in cards] == list(report.metric_summary)
    for card in cards:
        summary = report.metric_summary[card.attrs["data-metric"]]
        assert summary.mean is not None
        assert card.find(data_role="mean").text() == f"{summary.mean:.3f}"
        interval = f"{summary.ci_low:.3f} \N{EN DASH} {summary.ci_high:.3f}"
        assert interval in card.find(data_role="ci").text()
        meets = summary.mean >= summary.threshold
        if not summary.higher_is_better:
            meets = summary.mean <= summary.threshold
        assert ("pass" if meets else "fail") in card.classes
        gate = card.find(data_role="gate").text()
        sign = "≥" if summary.higher_is_better else "≤"
        assert f"{'meets' if meets else 'misses'} {sign} {summary.threshold:g}" in gate
        for key in summary.sub_scores:
            assert key in card.text()
    # hallucination_rate is lower-is-better with threshold 0, and the example has some.
    assert "fail" in doc.find("article", "card", data_metric="hallucination_rate").classes


def test_every_claim_is_highlighted_in_its_response_with_its_verdict() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    articles = {a.attrs["data-sample-id"]: a for a in samples_in(doc)}
    assert set(articles) == {r.id for r in report.samples}
    seen_verdicts = set()
    for result in report.samples:
        article = articles[result.id]
        response = samples[result.id].response or ""
        marks = article.find_all("mark", "claim")
        assert len(marks) == len(result.claims)
        for claim, mark in zip(result.claims, marks, strict=True):
            assert claim.span is not None
            assert mark.attrs["data-claim"] == claim.id
            assert mark.attrs["data-verdict"] == claim.verdict.value
            assert VERDICTS[claim.verdict].css in mark.classes
            assert mark.find("a").text() == response[claim.span[0] : claim.span[1]]
            assert VERDICTS[claim.verdict].label in mark.text()  # not colour alone
            card = article.find("details", "claim-card", data_claim=claim.id)
            assert VERDICTS[claim.verdict].css in card.classes
            assert VERDICTS[claim.verdict].label in card.find("summary").text()
            assert mark.find("a").attrs["href"] == "#" + card.attrs["id"]
            seen_verdicts.add(claim.verdict)
        # The response reads as it was written: highlights only wrap it.
        assert article.find("p", "response").text() == _with_tags(response, result.claims)
    assert seen_verdicts == set(VERDICTS)  # the example exercises all four colours


def _with_tags(response: str, claims: Sequence[ClaimRecord]) -> str:
    """The response text with each claim's superscript tag and screen-reader label inserted."""
    out, position = [], 0
    for number, claim in sorted(enumerate(claims, 1), key=lambda c: c[1].span or (0, 0)):
        end = (claim.span or (0, 0))[1]
        style = VERDICTS[claim.verdict]
        out += [response[position:end], f"{style.symbol}{number}"]
        out.append(f" (claim {number}: {style.label})")
        position = end
    return "".join(out) + response[position:]


def test_a_claim_card_shows_reason_evidence_and_the_cited_context() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    result = next(
        r for r in report.samples if any(c.verdict.value == "CONTRADICTED" for c in r.claims)
    )
    claim = next(c for c in result.claims if c.verdict.value == "CONTRADICTED")
    article = doc.find("article", "sample", data_sample_id=result.id)
    card = article.find("details", "claim-card", data_claim=claim.id)
    text = card.text()
    assert claim.reason in text and claim.evidence in text
    assert "Quote found" in text and "not checked" in text  # the offline judge does not check
    assert claim.context_index is not None
    context = samples[result.id].contexts[claim.context_index]
    quoted = card.find("blockquote", "context")
    assert quoted.text() == context.text
    assert quoted.find("mark", "evidence").text() == claim.evidence


def test_a_claim_card_shows_the_probability_of_support_when_the_judge_gives_one() -> None:
    data = list(vera.load_dataset("example"))[:3]
    learned = vera.evaluate(data, metrics(), OfflineJudge(learned=True))
    _, doc = render(learned, samples={s.id: s for s in data})
    shown = 0
    for result in learned.samples:
        article = doc.find("article", "sample", data_sample_id=result.id)
        for claim in result.claims:
            assert claim.entailment is not None  # the report keeps each claim's probability
            card = article.find("details", "claim-card", data_claim=claim.id)
            assert f"P(supported){claim.entailment:.2f} " in card.text()
            shown += 1
    assert shown
    lexical, samples = example()  # the lexical judge gives no probability, and none is shown
    assert all(c.entailment is None for r in lexical.samples for c in r.claims)
    assert "P(supported)" not in render(lexical, samples=samples)[0]


def test_samples_come_worst_first_and_the_worst_are_open() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    ids = [a.attrs["data-sample-id"] for a in samples_in(doc)]
    faithfulness = [report.sample(i).scores["faithfulness"] for i in ids]
    assert faithfulness == sorted(faithfulness)  # type: ignore[type-var]
    opened = ["open" in a.find("details").attrs for a in samples_in(doc)]
    assert opened[:3] == [True] * 3 and not any(opened[3:])


def test_hostile_text_from_the_dataset_is_escaped_everywhere() -> None:
    hostile = hostile_sample()
    report = vera.evaluate([hostile], metrics())
    result = report.sample(hostile.id)
    assert result.status is SampleStatus.SCORED
    assert any(SCRIPT in c.text for c in result.claims)  # in claim texts
    assert any(IMG in c.text for c in result.claims)
    assert any(SCRIPT in c.evidence for c in result.claims)  # and in the evidence
    html, doc = render(report, samples={hostile.id: hostile})

    # Nothing the dataset said became markup: one script (the page's own), no image, no
    # handler attribute anywhere.
    assert html.count("<script") == 1 and "window.__pwned" not in _script_text(doc)
    assert "<img" not in html and not doc.find_all("img")
    assert not [n for n in doc.iter() if any(a.startswith("on") for a in n.attrs)]
    assert "&lt;script&gt;document.title = window.__pwned" in html

    # Each hostile value survives as text (and attribute values as themselves).
    article = doc.find("article", "sample")
    assert article.attrs["data-sample-id"] == hostile.id
    assert article.attrs["data-category"] == hostile.category
    assert hostile.id in article.find("span", "sid").text()
    assert SCRIPT in article.find("p", "query").text()
    assert (
        article.find("p", "response").text().startswith(f"The refund window is 30 days {SCRIPT}.")
    )
    claim_texts = [n.text() for n in article.find_all("span", "claim-text")]
    assert any(IMG in text for text in claim_texts)
    assert any(SCRIPT in n.text() for n in article.find_all("blockquote", "context"))
    options = [o.attrs["value"] for o in doc.find("select", name="category").find_all("option")]
    assert hostile.category in options
    assert doc.find("title").text() == "VERA report · samples"


def _script_text(doc: Node) -> str:
    return "".join(s.text() for s in doc.find_all("script"))


def test_the_page_references_no_external_resource() -> None:
    report, samples = example()
    html, doc = render(report, samples=samples, history=_history(report, 3))
    assert not re.search(r"https?://", html, re.IGNORECASE)
    assert not re.search(r"""(?:src|href|action|srcset|poster|data)\s*=\s*["']?\s*//""", html)
    assert not re.search(r"@import|url\(", html)
    for node in doc.iter():
        for name in ("src", "href", "action", "xlink:href"):
            value = node.attrs.get(name)
            assert value is None or value.startswith("#"), (node.tag, name, value)
    policy = doc.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert "default-src 'none'" in policy
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        body = doc.find(tag).text()
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in policy


def test_without_sample_texts_the_claims_are_listed_with_their_verdicts() -> None:
    report, _ = example()
    _, doc = render(report)
    assert not doc.find_all("mark", "claim")
    cards = doc.find_all("details", "claim-card")
    assert len(cards) == sum(len(r.claims) for r in report.samples)
    for card in cards:
        assert "claim" in card.classes and card.classes & {s.css for s in VERDICTS.values()}
    assert "claims are listed rather than highlighted" in doc.text()


def test_claims_without_a_usable_span_are_listed_not_highlighted() -> None:
    report, samples = example()
    result = next(r for r in report.samples if len(r.claims) >= 3)
    first, second, *rest = result.claims
    broken = (
        first.model_copy(update={"span": None}),
        second.model_copy(update={"span": (0, 10_000)}),  # beyond the response
        *rest,
    )
    changed = result.model_copy(update={"claims": broken})
    report = report.model_copy(update={"samples": (changed,)})
    _, doc = render(report, samples=samples)
    marks = doc.find_all("mark", "claim")
    assert [m.attrs["data-claim"] for m in marks] == [c.id for c in rest]
    assert len(doc.find_all("details", "claim-card")) == len(broken)
    assert "2 claim(s) could not be placed" in doc.text()


def test_a_run_with_no_samples_renders() -> None:
    # A whole run refuses empty data (nothing to measure); one pass's report can still be empty.
    report = asyncio.run(run_pass([], metrics()))
    _, doc = render(report, samples={})
    assert doc.find(id="no-samples")
    assert not samples_in(doc)
    assert not doc.find_all(id="filters")
    card = doc.find("article", "card", data_metric="faithfulness")
    assert card.find(data_role="mean").text() == "—"
    assert "no scored samples" in card.find(data_role="gate").text()


def test_a_stopped_run_shows_why_and_its_errors_and_skipped_samples() -> None:
    data = list(vera.load_dataset("example"))[:6]
    judge = StoppingJudge(fail_on=data[1].response or "", stop_on=data[3].response or "")
    report = vera.evaluate(data, metrics(), judge, concurrency=1)
    assert report.stopped is not None and report.counts["skipped"] == 3
    _, doc = render(report, samples={s.id: s for s in data})
    notice = doc.find(id="stopped")
    assert notice.attrs["role"] == "alert"
    assert "the API key was rejected (401)" in notice.text()
    assert "3 sample(s) were not evaluated" in notice.text()
    statuses = [a.attrs["data-status"] for a in samples_in(doc)]
    assert statuses == ["error", "scored", "scored", "skipped", "skipped", "skipped"]
    error = doc.find("article", "sample", data_sample_id=data[1].id)
    assert "the judge's reply could not be read" in error.find("p", "error-box").text()
    options = [o.attrs["value"] for o in doc.find("select", name="status").find_all("option")]
    assert options == ["", "scored", "error", "skipped"]


def test_the_baseline_section_appears_only_with_baselines() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    assert not doc.find_all(id="baselines")

    data = list(vera.load_dataset("example"))
    strict = vera.evaluate(data, metrics(), OfflineJudge(full_support=0.95, partial_support=0.7))
    compared = report.model_copy(
        update={
            "pipeline": "my-rag",
            "baseline_comparison": baseline_comparison(report, {"strict-judge": strict}),
        }
    )
    _, doc = render(compared, samples=samples)
    section = doc.find("section", id="baselines")
    panels = section.find_all("figure", "panel")
    assert [p.attrs["data-metric"] for p in panels] == list(report.metric_summary)
    bars = panels[0].find_all("rect", "bar")
    assert {b.attrs["class"] for b in bars} == {"bar system", "bar baseline"}
    rows = section.find("table", "baseline-table").find("tbody").find_all("tr")
    assert len(rows) == len(report.metric_summary)
    significance = compared.baseline_comparison["significance"]["strict_judge"]  # type: ignore[index]
    faithfulness = rows[0].text()
    assert "strict_judge" in faithfulness
    improvement = compared.baseline_comparison["improvement_over_baseline"]["strict_judge"]  # type: ignore[index]
    assert improvement["faithfulness"] in faithfulness
    p_value = significance["faithfulness"]["p_value"]
    assert (f"{p_value:.3f}" if p_value >= 0.001 else "< 0.001") in faithfulness
    assert "my-rag" in section.find("p").text()


def test_laws_and_judge_usage_appear_when_the_report_has_them() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    assert not doc.find_all(id="laws") and not doc.find_all("table", "usage")
    usage = {
        "calls": 56,
        "cached_calls": 6,
        "prompt_tokens": 41_000,
        "completion_tokens": 3_200,
        "cost_usd": 0.0123,
        "by_model": {},
        "by_label": {
            "extract_claims": {"calls": 28, "cached_calls": 3, "prompt_tokens": 20_000,
                               "completion_tokens": 1_700, "cost_usd": 0.006},
            "verify_claims": {"calls": 28, "cached_calls": 3, "prompt_tokens": 21_000,
                              "completion_tokens": 1_500, "cost_usd": 0.0063},
        },
        "unpriced_models": [],
    }  # fmt: skip
    updated = report.model_copy(
        update={
            "categorical_tests": {"functor_identity": "PASS", "functor_composition": "FAIL"},
            "judge_details": {"mode": "batched", "usage": usage},
        }
    )
    _, doc = render(updated, samples=samples)
    laws = doc.find("section", id="laws").text()
    assert "functor identity" in laws and "PASS" in laws and "FAIL" in laws
    table = doc.find("table", "usage").text()
    for expected in ("extract_claims", "verify_claims", "56", "41000", "3200", "$0.0123"):
        assert expected in table
    assert "batched" in doc.find("section", id="judge").text()


def _history(report: Report, count: int) -> list[HistoryPoint]:
    return [
        HistoryPoint(
            run_id=f"run-{i}",
            timestamp=f"2026-01-0{i + 1}T09:00:00Z",
            metrics={
                k: None if v is None else v * (0.9 + 0.03 * i) for k, v in report.metrics.items()
            },
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("points", [0, 1])
def test_no_trend_chart_with_fewer_than_two_runs(points: int) -> None:
    report, samples = example()
    _, doc = render(report, samples=samples, history=_history(report, points))
    assert not doc.find_all(id="trend")


def test_a_trend_chart_per_metric_with_two_or_more_runs() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples, history=_history(report, 4))
    section = doc.find("section", id="trend")
    panels = section.find_all("figure", "panel")
    assert [p.find("h3").text() for p in panels] == list(report.metric_summary)
    for panel in panels:
        assert len(panel.find_all("circle", "point")) == 4
        assert len(panel.find_all("path", "line")) == 1
    assert "run-0" in section.text() and "run-3" in section.text()


def test_histograms_count_every_scored_sample() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    section = doc.find("section", id="distributions")
    for name, summary in report.metric_summary.items():
        panel = section.find("figure", "panel", data_metric=name)
        counts = [int(t.text()) for t in panel.find_all("text", "count")]
        assert sum(counts) == summary.scored


def test_the_category_breakdown_has_a_bar_per_category() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    grid = doc.find("div", data_breakdown="category")
    categories = list(report.breakdowns["category"])
    for panel in grid.find_all("figure", "panel"):
        labels = [t.find("title").text().split(" (")[0] for t in panel.find_all("text", "label")]
        assert labels == categories


def test_chart_labels_are_escaped() -> None:
    chart = str(bar_panel([Bar(SCRIPT, 0.5), Bar(IMG, None)], title=SCRIPT))
    assert "<script" not in chart and "<img" not in chart
    assert "&lt;script&gt;" in chart
    assert str(histogram([0.0, 0.5, 1.0, 1.0], title=IMG)).count("<img") == 0
