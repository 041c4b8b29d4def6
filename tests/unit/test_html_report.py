"""The HTML report, rendered from real `vera.evaluate` reports with the offline judge.

The page's HTML (summary, charts, tables) is checked here as a DOM; the samples are a compressed
JSON document that the page's script shows, so here they are checked as that document (read
back with `read_samples`), and as a person sees them in `tests/browser/`.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from html.parser import HTMLParser
from typing import Any

import pytest
from tests.support.example_metrics import EXAMPLE_METRICS

import vera
from vera import Claim, Context, Report, RunStopError, Sample, SampleResult, SampleStatus, Verdict
from vera._results import Outcome, baseline_comparison, relative_change, sample_outcome, significant
from vera._run import LocalExecutor
from vera.executors import PassWork, run_pass
from vera.judges import OfflineJudge
from vera.render import render_html
from vera.render._charts import Bar, bar_panel, histogram
from vera.render._html import read_samples
from vera.render._samples import OUTCOMES, VERDICTS, unpack
from vera.render._view import HistoryPoint
from vera.testing import FakeJudge

WHITEBOX = "the report builder, on hand-made results"

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
# Every metric with something to score on the example (not the agent metrics).
ALL_METRICS = EXAMPLE_METRICS


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
    **options: Any,
) -> tuple[str, Node]:
    html = render_html(report, samples=samples, history=history, **options)
    return html, parse(html)


class Packed:
    """The page's sample data, read as the page's script reads it."""

    def __init__(self, html: str) -> None:
        self.data = read_samples(html)
        self.rows = self.data["rows"]
        self.details = {d["row"]: d for d in self.data["details"]}

    def ids_worst_first(self) -> list[str]:
        return [self.rows[row][0] for row in self.data["order"]]

    def detail(self, sample_id: str) -> dict[str, Any]:
        (row,) = [i for i, r in enumerate(self.rows) if r[0] == sample_id]
        return self.details[row]

    def context(self, detail: dict[str, Any], position: int) -> str:
        ref = detail["x"][position]
        return str(self.data["contexts"][ref if isinstance(ref, int) else ref[0]])

    def claim_text(self, detail: dict[str, Any], claim: dict[str, Any]) -> str:
        if "t" in claim:
            return str(claim["t"])
        start, end = claim["s"]
        return str(detail["t"][start:end])

    def evidence(self, detail: dict[str, Any], claim: dict[str, Any]) -> str:
        quote = claim.get("e", "")
        if isinstance(quote, str):
            return quote
        return self.context(detail, claim["cx"])[quote[0] : quote[1]]


# The tests.
@pytest.mark.slow
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


def test_every_claim_is_kept_as_a_span_of_its_response_with_its_verdict() -> None:
    report, samples = example()
    packed = Packed(render(report, samples=samples)[0])
    assert sorted(packed.ids_worst_first()) == sorted(r.id for r in report.samples)
    verdicts = [Verdict(v[0]) for v in packed.data["verdicts"]]
    assert verdicts == list(VERDICTS)
    assert [v[1:] for v in packed.data["verdicts"]] == [
        [s.css, s.label, s.symbol] for s in VERDICTS.values()
    ]
    seen = set()
    for result in report.samples:
        detail = packed.detail(result.id)
        assert detail["t"] == samples[result.id].response  # the response, once
        assert len(detail["c"]) == len(result.claims)
        for record, claim in zip(result.claims, detail["c"], strict=True):
            assert claim["id"] == record.id
            assert verdicts[claim["v"]] is record.verdict
            assert claim["s"] == list(record.span or ())
            assert "t" not in claim  # the span gives the claim's text: it is not stored again
            assert packed.claim_text(detail, claim) == record.text
            seen.add(record.verdict)
    assert seen == set(VERDICTS)  # the example exercises all four colours


def test_a_claim_keeps_its_reason_evidence_and_cited_context() -> None:
    report, samples = example()
    packed = Packed(render(report, samples=samples)[0])
    for result in report.samples:
        detail = packed.detail(result.id)
        contexts = samples[result.id].contexts
        assert [packed.context(detail, i) for i in range(len(contexts))] == [
            c.text for c in contexts
        ]
        for record, claim in zip(result.claims, detail["c"], strict=True):
            assert claim.get("r", "") == record.reason
            assert claim.get("cx") == record.context_index
            assert packed.evidence(detail, claim) == record.evidence
            if record.context_index is not None and record.evidence in (
                contexts[record.context_index].text
            ):
                assert isinstance(claim["e"], list)  # a slice of its context, not a copy
            assert "qf" not in claim  # the offline judge does not check quotes


def test_a_claim_keeps_the_probability_of_support_when_the_judge_gives_one() -> None:
    data = list(vera.load_dataset("example"))[:3]
    learned = vera.evaluate(data, metrics(), OfflineJudge(learned=True))
    packed = Packed(render(learned, samples={s.id: s for s in data})[0])
    shown = 0
    for result in learned.samples:
        for record, claim in zip(result.claims, packed.detail(result.id)["c"], strict=True):
            assert record.entailment is not None  # the report keeps each claim's probability
            assert claim["en"] == record.entailment
            shown += 1
    assert shown
    # A judge that gives verdicts only: no probability is made up for it.
    plain = FakeJudge({s.response or "": [("One claim.", "FULLY_SUPPORTED")] for s in data})
    verdicts_only = vera.evaluate(data, metrics=["faithfulness"], judge=plain)
    assert all(c.entailment is None for r in verdicts_only.samples for c in r.claims)
    plain_packed = Packed(render(verdicts_only, samples={s.id: s for s in data})[0])
    assert not any("en" in c for d in plain_packed.details.values() for c in d["c"])


def test_samples_come_worst_first_and_the_worst_are_open() -> None:
    report, samples = example()
    html, doc = render(report, samples=samples)
    ids = Packed(html).ids_worst_first()
    # The samples that fail any metric (each in its own direction) come first, then the rest;
    # each group by faithfulness, worst first.
    failing = [any(r.passed is False for r in report.sample(i).results.values()) for i in ids]
    assert failing == sorted(failing, reverse=True)
    assert any(failing) and not all(failing)
    for group in (True, False):
        faithfulness = [
            report.sample(i).scores["faithfulness"]
            for i, fails in zip(ids, failing, strict=True)
            if fails is group
        ]
        assert faithfulness == sorted(faithfulness)  # type: ignore[type-var]
    listing = doc.find("div", id="sample-list")
    assert listing.attrs["data-opened"] == "3"  # the script opens the three worst
    assert listing.attrs["data-page-size"] == "50"


def test_hostile_text_from_the_dataset_is_escaped_everywhere() -> None:
    hostile = hostile_sample()
    report = vera.evaluate([hostile], metrics())
    result = report.sample(hostile.id)
    assert result.status is SampleStatus.SCORED
    assert any(SCRIPT in c.text for c in result.claims)  # in claim texts
    assert any(IMG in c.text for c in result.claims)
    assert any(SCRIPT in c.evidence for c in result.claims)  # and in the evidence
    html, doc = render(report, samples={hostile.id: hostile})

    # Nothing the dataset said became markup: one script that runs (the page's own), one
    # data block of base64 only, no image, no handler attribute anywhere.
    scripts = doc.find_all("script")
    assert [s.attrs.get("type") for s in scripts] == ["application/octet-stream", None]
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", scripts[0].text())
    assert html.count("<script") == 2 and "window.__pwned" not in _script_text(doc)
    assert "<img" not in html and not doc.find_all("img")
    assert not [n for n in doc.iter() if any(a.startswith("on") for a in n.attrs)]
    options = [o.attrs["value"] for o in doc.find("select", name="category").find_all("option")]
    assert hostile.category in options
    assert "&lt;script&gt;document.title = window.__pwned" in html  # the category, escaped
    assert doc.find("title").text() == "VERA report · samples"

    # Each hostile value survives as itself in the data, for the script to set as text.
    packed = Packed(html)
    assert packed.rows[0][0] == hostile.id and packed.rows[0][2] == hostile.category
    detail = packed.detail(hostile.id)
    assert detail["q"] == hostile.query and detail["t"] == hostile.response
    assert any(IMG in packed.claim_text(detail, c) for c in detail["c"])
    assert packed.data["contexts"] == [hostile.contexts[0].text]


def _script_text(doc: Node) -> str:
    return "".join(s.text() for s in doc.find_all("script") if "type" not in s.attrs)


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
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    page_script = [s for s in doc.find_all("script") if "type" not in s.attrs]
    for node, directive in ((doc.find("style"), "style-src"), (page_script[0], "script-src")):
        digest = base64.b64encode(hashlib.sha256(node.text().encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}';" in policy
    assert policy.count("sha256-") == 2  # the page's own style and script, nothing else


def test_without_sample_texts_the_claims_are_listed_with_their_verdicts() -> None:
    report, _ = example()
    # Results keep the response they judged; a report from before they did has no text.
    textless = tuple(r.model_copy(update={"response": None}) for r in report.samples)
    report = report.model_copy(update={"samples": textless})
    html, doc = render(report)
    packed = Packed(html)
    claims = [c for d in packed.details.values() for c in d["c"]]
    assert len(claims) == sum(len(r.claims) for r in report.samples)
    assert all("s" not in c and "t" in c for c in claims)  # listed, with their own text
    assert all("t" not in d for d in packed.details.values())
    assert "claims are listed rather than highlighted" in doc.find(id="no-texts").text()
    _, with_texts = render(report, samples=example()[1])
    assert not with_texts.find_all(id="no-texts")


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
    claims = Packed(render(report, samples=samples)[0]).detail(result.id)["c"]
    assert [c["id"] for c in claims] == [c.id for c in broken]
    assert [c["id"] for c in claims if "s" in c] == [c.id for c in rest]
    assert [c["t"] for c in claims if "s" not in c] == [first.text, second.text]


def test_a_pipeline_result_shows_its_own_response_and_contexts() -> None:
    result = SampleResult(
        id="p1",
        status=SampleStatus.SCORED,
        response="Refunds take 30 days.",
        contexts=(Context(text="Refunds are paid within 30 days.", id="kb-7"),),
    )
    report = asyncio.run(
        run_pass([], PassWork(metrics(), OfflineJudge()), LocalExecutor())
    ).model_copy(update={"samples": (result,)})
    packed = Packed(render(report, samples={"p1": Sample(id="p1", query="How long?")})[0])
    detail = packed.detail("p1")
    assert (detail["q"], detail["t"]) == ("How long?", "Refunds take 30 days.")
    assert detail["x"] == [[0, "kb-7", None]]
    assert packed.data["contexts"] == ["Refunds are paid within 30 days."]


def test_a_context_shared_by_claims_and_samples_is_stored_once() -> None:
    passage = "The refund window is 30 days. Refunds are paid by bank transfer."
    data = [
        Sample(id=f"s{i}", response=text, contexts=[passage, f"Unrelated note {i}."])
        for i, text in enumerate(
            ["The refund window is 30 days. Refunds are paid by bank transfer.",
             "Refunds are paid by bank transfer.",
             "The refund window is 30 days."]
        )
    ]  # fmt: skip
    report = vera.evaluate(data, metrics())
    html, _ = render(report, samples={s.id: s for s in data})
    packed = Packed(html)
    assert packed.data["contexts"].count(passage) == 1
    assert len(packed.data["contexts"]) == 4  # the passage and three notes
    assert html.count("bank transfer") == 0  # all of it is in the compressed data
    cited = [c for d in packed.details.values() for c in d["c"] if c.get("cx") == 0]
    assert len(cited) >= 3
    assert all(isinstance(c["e"], list) for c in cited)  # evidence: a slice, not a copy


class ReadOnce:
    """Results that can be iterated once, as a streamed run's are."""

    def __init__(self, results: Sequence[SampleResult]) -> None:
        self.results, self.reads = results, 0

    def __iter__(self) -> Iterator[SampleResult]:
        self.reads += 1
        assert self.reads == 1, "the renderer read the results twice"
        return iter(self.results)


def test_results_are_read_once_from_an_iterable_not_from_the_report() -> None:
    report, samples = example()
    results = ReadOnce(report.samples)
    streamed = report.model_copy(update={"samples": ()})
    html, doc = render(streamed, samples=samples, results=results)
    assert results.reads == 1
    assert html == render_html(report, samples=samples)  # the same page as from report.samples
    assert Packed(html).data["total"] == len(report.samples)
    panel = doc.find("section", id="distributions").find("figure", data_metric="faithfulness")
    counts = [int(t.text()) for t in panel.find_all("text", "count")]
    assert sum(counts) == report.metric_summary["faithfulness"].scored


def test_past_the_detail_limit_the_worst_samples_keep_their_detail_and_the_page_says_so() -> None:
    report, samples = example()
    html, doc = render(report, samples=samples, detail_limit=5)
    packed = Packed(html)
    total = len(report.samples)
    assert (packed.data["total"], packed.data["detailed"]) == (total, 5)
    assert len(packed.rows) == total  # every sample is still listed, filterable and counted
    worst = packed.data["order"][:5]
    assert sorted(packed.details) == sorted(worst)
    notice = " ".join(doc.find(id="sample-cap").text().split())
    assert f"of the 5 lowest-scoring samples of {total}" in notice
    assert f"The other {total - 5} are listed with their id, status, category" in notice
    assert "JSON report" in notice and "vera report RUN_ID -o report.json" in notice
    _, everything = render(report, samples=samples)
    assert not everything.find_all(id="sample-cap")


def test_a_run_with_no_samples_renders() -> None:
    # A whole run refuses empty data (nothing to measure); one pass's report can still be empty.
    report = asyncio.run(run_pass([], PassWork(metrics(), OfflineJudge()), LocalExecutor()))
    _, doc = render(report, samples={})
    assert doc.find(id="no-samples")
    assert not doc.find_all("script", id="sample-data")
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
    packed = Packed(render(report, samples={s.id: s for s in data})[0])
    names = packed.data["statuses"]
    statuses = [names[packed.rows[row][1]] for row in packed.data["order"]]
    assert statuses == ["error", "scored", "scored", "skipped", "skipped", "skipped"]
    assert "the judge's reply could not be read" in packed.detail(data[1].id)["err"]
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
    table = section.find("table", "baseline-table")
    heads = [th.text() for th in table.find("thead").find_all("th")]
    assert heads == [
        "Metric", "Compared with", "System mean", "Baseline mean", "Difference",
        "95% CI of the difference", "p", "Relative change",
    ]  # fmt: skip
    rows = table.find("tbody").find_all("tr")
    assert len(rows) == len(report.metric_summary)
    assert compared.baseline_comparison is not None
    significance = compared.baseline_comparison.significance["strict_judge"]
    for row, metric in zip(rows, report.metric_summary, strict=True):
        comparison = significance[metric]
        cells = row.find_all("td")
        assert [cells[0].text(), cells[1].text()] == [metric, "strict_judge"]
        relative = relative_change(comparison.system_mean, comparison.baseline_mean)
        assert cells[7].text() == (relative or "—")
        assert row.attrs["data-significant"] == ("yes" if significant(comparison) else "no")
        assert bool(row.find_all("span", "significant")) is significant(comparison)
        p_value = comparison.p_value
        assert p_value is not None
        assert (f"{p_value:.3f}" if p_value >= 0.001 else "< 0.001") in cells[6].text()
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


def test_each_row_carries_its_outcome_and_each_failed_metric_its_score() -> None:
    report, samples = example()
    packed = Packed(render(report, samples=samples)[0])
    assert packed.data["version"] == 2
    assert packed.data["outcomes"] == [
        [o.value, style.css, style.label, style.symbol] for o, style in OUTCOMES.items()
    ]
    metrics = packed.data["metrics"]
    assert packed.data["lower"] == [
        n for n, s in report.metric_summary.items() if not s.higher_is_better
    ]
    assert "hallucination_rate" in packed.data["lower"]
    assert packed.data["latency"] == "dataset"  # the example's own latency_ms
    for row in packed.rows:
        result = report.sample(row[0])
        outcome = sample_outcome(result)
        assert packed.data["outcomes"][row[7]][0] == outcome.outcome.value
        failed = [(metrics[m], score) for m, score in row[4]]
        assert failed == [(name, result.results[name].score) for name in outcome.failed]
        detail = packed.detail(result.id)
        assert detail["o"] == outcome.why
        assert detail.get("k", 0) == outcome.unsupported
        assert [m[5] for m in detail["m"]] == [r.threshold for r in result.results.values()]
    contradicted = [r for r in report.samples if sample_outcome(r).unsupported]
    assert contradicted and all("k" in packed.detail(r.id) for r in contradicted)


def test_a_pipeline_run_says_its_latency_was_measured_and_the_dataset_s_says_it_was_given() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    heading = doc.find("h2", id="latency-h").text()
    assert "from the dataset" in heading
    assert "latency_ms" in doc.find(id="latency-source").text()
    piped = report.model_copy(update={"pipeline": "my-rag"})
    html, doc = render(piped, samples=samples)
    assert doc.find("h2", id="latency-h").text() == "Pipeline latency, measured by VERA"
    assert "my-rag" in doc.find(id="latency-source").text()
    assert Packed(html).data["latency"] == "pipeline"


def test_the_outcome_filter_offers_the_outcomes_present() -> None:
    report, samples = example()
    _, doc = render(report, samples=samples)
    options = [o.attrs["value"] for o in doc.find("select", name="outcome").find_all("option")]
    present = {sample_outcome(r).outcome for r in report.samples}
    assert options == ["", *(o.value for o in OUTCOMES if o in present)]
    assert Outcome.FAIL in present and Outcome.PASS in present
    legend = [b.text() for b in doc.find(id="outcome-legend").find_all("span", "outcome")]
    assert len(legend) == len(present)


def test_sample_data_of_another_version_is_refused() -> None:
    report, samples = example()
    html, _ = render(report, samples=samples)
    data = read_samples(html)
    data["version"] = 1
    text = base64.b64encode(gzip.compress(json.dumps(data).encode())).decode()
    with pytest.raises(ValueError, match="version 2"):
        unpack(text)
