"""`vera benchmark`: a judge measured on a file of human labels."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from vera import ExitCode, JudgeBenchmark, JudgeError, VeraError, benchmark_judge, load_settings
from vera.cli._app import _fail, _write_json, app, err, out
from vera.cli._eval_flags import _ConcurrencyFlag, _JudgeFlag, _OfflineMinSupportFlag
from vera.render._console import Column, format_score, print_table
from vera.render._outputs import check_output_paths

if TYPE_CHECKING:
    from vera._run import Rule  # a type: which rule flags an answer


class BenchmarkRule(StrEnum):
    """`vera benchmark --rule`: how an answer is flagged (`vera._run._judge_benchmark.Rule`)."""

    ANSWER_VERDICT = "answer-verdict"
    FAITHFULNESS = "faithfulness"
    ANY_CLAIM = "any-claim"


_BENCHMARK_RULES: dict[BenchmarkRule, Rule] = {
    BenchmarkRule.ANSWER_VERDICT: "answer_verdict",
    BenchmarkRule.FAITHFULNESS: "faithfulness",
    BenchmarkRule.ANY_CLAIM: "any_claim",
}


@app.command("benchmark")
def benchmark_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL of labelled answers: response, contexts, label (1 = unfaithful, "
            "0 = faithful); optional id, query, task_type, hallucinated_spans.",
            show_default=False,
        ),
    ],
    judge: _JudgeFlag = None,
    offline_min_support: _OfflineMinSupportFlag = None,
    concurrency: _ConcurrencyFlag = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Judge only the first N rows.")
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
    rule: Annotated[
        BenchmarkRule,
        typer.Option(
            "--rule",
            help="The rule listed first and written as `groups` in --json (all are measured): "
            "answer-verdict flags an unfaithful answer, as vera eval decides; faithfulness one "
            "whose mean fails its threshold; any-claim one with any claim not fully supported.",
        ),
    ] = BenchmarkRule.ANSWER_VERDICT,
) -> None:
    """Measure a judge on your own labels: how well it finds the unfaithful answers
    (precision, recall, F1, balanced accuracy, AUROC; per task type and rule; span overlap).

    Example: vera benchmark labelled.jsonl --judge offline:learned --json figures.json
    """
    try:
        check_output_paths([json_path] if json_path is not None else [])
        settings = load_settings(
            {"judge": judge, "offline_min_support": offline_min_support, "concurrency": concurrency}
        )
        result = benchmark_judge(
            file,
            settings.judge,
            settings=settings,
            concurrency=settings.concurrency,
            limit=limit,
            rule=_BENCHMARK_RULES[rule],
        )
    except JudgeError as exc:
        # The file was fine but the judge failed on a row: figures from part of the file would
        # pass for the whole, so there are none, and the exit is that of an incomplete run.
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(ExitCode.INCOMPLETE) from None
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _print_benchmark(result)
    if json_path is not None:
        _write_json(json_path, result.model_dump_json(indent=2), "the figures")
        out.print(f"Figures written to {escape(str(json_path))}", highlight=False)


_BENCHMARK_COLUMNS = (
    Column("Group"),
    Column("n"),
    Column("Unfaithful", "unfaithful"),
    Column("Prec.", "precision"),
    Column("Recall", "recall"),
    Column("F1"),
    Column("BAcc", "balanced accuracy"),
    Column("κ"),
    Column("AUROC"),
)


def _benchmark_rule_title(result: JudgeBenchmark, rule: Rule) -> str:
    """What `rule` flags and what its AUROC ranks by."""
    if rule == "any_claim":
        return (
            "Rule any-claim: flagged when a claim is not fully supported; "
            "AUROC by the least supported claim"
        )
    ranked = result.ranked_by
    if result.rows_without_probability:
        count = result.rows_without_probability
        ranked += f" ({count} row{'s' if count != 1 else ''} without probabilities by faithfulness)"
    if rule == "answer_verdict":
        return (
            "Rule answer-verdict: flagged when a claim is NO_EVIDENCE or CONTRADICTED, as vera "
            f"eval decides; AUROC by {ranked}"
        )
    return (
        "Rule faithfulness: flagged when faithfulness is below its threshold (the mean gate); "
        f"AUROC by {ranked}"
    )


def _print_benchmark(result: JudgeBenchmark) -> None:
    """A table per rule (the chosen rule first), one row per group, the unfaithful class
    counted as positive; then the span figures."""
    out.print(
        f"Judge {result.judge} · {result.path} · {result.rows} rows", highlight=False, markup=False
    )
    for rule, groups in result.rules.items():
        rows = [
            [name, str(g.n), str(g.positives)]
            + [
                format_score(v)
                for v in (g.precision, g.recall, g.f1, g.balanced_accuracy, g.kappa, g.auroc)
            ]
            for name, g in groups.items()
        ]
        print_table(out, _benchmark_rule_title(result, rule), _BENCHMARK_COLUMNS, rows)
    span = result.span
    if span is not None:
        out.print(
            f"Spans, by character ({span.rows} rows): precision "
            f"{format_score(span.precision)}, recall {format_score(span.recall)}, "
            f"F1 {format_score(span.f1)}",
            highlight=False,
            markup=False,
        )
    out.print(
        f"{result.samples_per_s:.1f} samples/s ({result.wall_seconds:.2f} s judging)",
        highlight=False,
    )
