"""JUnit XML, so CI systems show VERA's failures natively: each sample and metric is a test case.

Where the run verified claims, the first suite, `vera.answer_verdict`, has a case per sample:
an unfaithful answer is a `<failure>` whose message is the verdict's reason ("1 of 2 claims has
no evidence: ..."). In each metric's suite a failed metric is a `<failure>` whose message is
the metric's reason (which names the unsupported claims); a sample whose judge failed is an
`<error>`; a metric that does not apply, or a sample that was not evaluated, is `<skipped>`.

Ids, reasons and claims are data: a NUL or another character XML 1.0 forbids would make the
file not well-formed, so every attribute and text passes through `printable` (shown as ␀).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable

from vera._text import printable
from vera._types._report import Report, SampleResult, SampleStatus

ANSWER_SUITE = "answer_verdict"


def render_junit(report: Report, results: Iterable[SampleResult] | None = None) -> str:
    """The report as a JUnit XML document (one test suite per metric); `results` are the
    samples' results when they are not in `report.samples` (a streamed run), read once."""
    suites = ET.Element("testsuites", name=f"vera {report.dataset}")
    answers = (
        (ET.SubElement(suites, "testsuite", name=f"vera.{ANSWER_SUITE}"), Counter[str]())
        if report.answers is not None
        else None
    )
    metrics = {
        metric: (ET.SubElement(suites, "testsuite", name=f"vera.{metric}"), Counter[str]())
        for metric in report.metric_summary
    }
    for sample in report.samples if results is None else results:
        if answers is not None:
            _add_answer_case(*answers, sample)
        for metric, (suite, counts) in metrics.items():
            _add_case(suite, counts, metric, sample)
    for suite, counts in [*([answers] if answers else []), *metrics.values()]:
        for key in ("tests", "failures", "errors", "skipped"):
            suite.set(key, str(counts[key]))
    for element in suites.iter():
        element.text = element.text and printable(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = printable(value)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _add_case(suite: ET.Element, counts: Counter[str], metric: str, sample: SampleResult) -> None:
    """One sample's test case for `metric`, counted by its outcome."""
    case = ET.SubElement(suite, "testcase", classname=f"vera.{metric}", name=sample.id)
    counts["tests"] += 1
    if sample.latency_ms is not None:
        case.set("time", f"{sample.latency_ms / 1000:.3f}")
    result = sample.results.get(metric)
    if sample.status is SampleStatus.ERROR:
        counts["errors"] += 1
        ET.SubElement(case, "error", message=sample.error or "error").text = sample.error
    elif sample.status is not SampleStatus.SCORED or result is None:
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=sample.error or sample.status.value)
    elif result.score is None:
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=result.reason)
    elif result.passed is False:
        counts["failures"] += 1
        message = f"{metric} {result.score:.3f} misses {result.threshold:.2f}: {result.reason}"
        failure = ET.SubElement(case, "failure", message=message)
        failure.text = "\n".join(f"{claim.verdict.value}: {claim.text}" for claim in sample.claims)


def _add_answer_case(suite: ET.Element, counts: Counter[str], sample: SampleResult) -> None:
    """One sample's test case for its answer verdict, counted by its outcome."""
    case = ET.SubElement(suite, "testcase", classname=f"vera.{ANSWER_SUITE}", name=sample.id)
    counts["tests"] += 1
    verdict = sample.verdict
    if sample.status is SampleStatus.ERROR:
        counts["errors"] += 1
        ET.SubElement(case, "error", message=sample.error or "error").text = sample.error
    elif verdict is None:
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=sample.error or "no answer verdict")
    elif verdict.passed is False:
        counts["failures"] += 1
        failure = ET.SubElement(case, "failure", message=f"unfaithful answer: {verdict.reason}")
        failure.text = "\n".join(f"{claim.verdict.value}: {claim.text}" for claim in sample.claims)
