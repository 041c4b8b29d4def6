"""A VERA plugin package written to a folder: a metric, a judge, a provider and a report
format, declared under VERA's four entry-point groups in a real `.dist-info`, so
`importlib.metadata` finds it wherever the folder is on the path (sys.path or PYTHONPATH)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PLUGIN_ENTRY_POINTS", "PLUGIN_MODULE", "PLUGIN_SOURCE", "write_plugin"]

PLUGIN_MODULE = "vera_test_plugin"

# The shape of docs/examples/custom_metric.py, plus a judge, a provider and two report
# formats (one `write(view, out)`, one the earlier `render(report, context)`).
PLUGIN_SOURCE = """
from typing import ClassVar

from vera.judges import OfflineJudge
from vera.metrics import MetricStatus, Need, not_applicable, scored

JUDGE_CALLS = []


class PluginMetric:
    name: ClassVar[str] = "plugin_metric"
    description: ClassVar[str] = "share of the response's claims that state a number"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})
    higher_is_better: ClassVar[bool] = True

    def __init__(self, threshold: float = 0.0) -> None:
        self.threshold = threshold

    def score(self, sample, analysis):
        if not analysis.claims:
            return not_applicable(self, "no claims")
        numeric = {c.id: float(any(ch.isdigit() for ch in c.text)) for c in analysis.claims}
        share = sum(numeric.values()) / len(numeric)
        return scored(self, share, "numbers", claim_weights=numeric, status=MetricStatus.OK)


def make_judge(arg, settings):
    JUDGE_CALLS.append((arg, settings))
    return OfflineJudge()


class EchoModel:
    provider = "echo"

    def __init__(self, model, *, base_url=None, api_key=None):
        self.model, self.base_url, self.api_key = model, base_url, api_key


RENDERED = []


class CsvReporter:
    # The earlier shape, render(report, context) -> str: still accepted.
    name = "csv"
    extension = ".csv"

    def render(self, report, context):
        RENDERED.append({"samples": len(context.samples), "history": len(context.history)})
        rows = [f"{r.id},{r.scores.get('faithfulness')}" for r in context.sample_results(report)]
        return "\\n".join(["id,faithfulness", *rows, f"gate:{len(context.gate_failures)}"])


CSV = CsvReporter()


class CountsReporter:
    # The one door: write(view, out), reading what the run view loads.
    name = "counts"
    extension = ".counts"

    def write(self, view, out):
        import json

        texts = sum(1 for sample in view.samples.values() if sample.query)
        out.write(json.dumps({
            "samples": len(view.samples),
            "texts": texts,
            "results": sum(1 for _ in view.sample_results()),
            "history": len(view.history),
            "gate_failures": list(view.gate_failures),
            "scored": view.report.counts["scored"],
            "run_id": view.run_id,
        }))


COUNTS = CountsReporter()
"""

PLUGIN_ENTRY_POINTS = """
[vera.metrics]
plugin_metric = vera_test_plugin:PluginMetric

[vera.judges]
my_judge = vera_test_plugin:make_judge

[vera.providers]
echo = vera_test_plugin:EchoModel

[vera.reporters]
csv = vera_test_plugin:CSV
counts = vera_test_plugin:COUNTS
"""


def write_plugin(
    folder: Path, source: str = PLUGIN_SOURCE, entries: str = PLUGIN_ENTRY_POINTS
) -> Path:
    """Write `vera_test_plugin.py` and the `vera-test-plugin` distribution declaring `entries`
    into `folder`; return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PLUGIN_MODULE}.py").write_text(source, encoding="utf-8")
    info = folder / f"{PLUGIN_MODULE}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: vera-test-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entries.lstrip(), encoding="utf-8")
    return folder
