"""`vera._run` and `vera benchmark`: a judge measured on a small labelled file, with
the offline judge, whose verdicts on these rows are known (a copied answer is supported, an
invented fact or a changed number is not, a paraphrase looks only partly supported to it, and an
added condition whose words are all in the context slips past it). Each unfaithful answer is one
bad claim, so faithfulness (the seeds' mean of verdict weights) fails it: 0.0."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import vera
from vera import (
    Claim,
    ClaimVerdict,
    DatasetError,
    DatasetRowError,
    JudgeBenchmark,
    JudgeError,
    Sample,
    abenchmark_judge,
    benchmark_judge,
)
from vera._run import LabelledRow, RowOutcome, benchmark_figures, read_labelled_rows
from vera._stats import auroc
from vera.cli import app
from vera.judges import OfflineJudge
from vera.testing import FakeJudge

WHITEBOX = "the statistics formulas; the labelled-file reader"

CONTEXT = "The museum opens at 9 am. Entry costs 12 euros. The museum is closed on Mondays."
INVENTED = "Visitors get a free audio guide in six languages."
WRONG = "Entry costs 40 euros."
MISSED = "for adults"


def row(
    row_id: str, task: str, response: str, label: int, bad: str | None = None, spans: bool = True
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": row_id,
        "task_type": task,
        "query": "What should a visitor know?",
        "contexts": [CONTEXT],
        "response": response,
        "label": label,
    }
    if spans:
        start = response.index(bad) if bad else 0
        data["hallucinated_spans"] = (
            [{"start": start, "end": start + len(bad), "text": bad, "label_type": "x"}]
            if bad
            else []
        )
    return data


ROWS = [
    row("copy", "QA", "The museum opens at 9 am. Entry costs 12 euros.", 0),
    row("invented", "QA", INVENTED, 1, INVENTED),
    row("wrong", "Summary", WRONG, 1, WRONG),
    row("paraphrase", "Summary", "Admission is 12 euros.", 0, spans=False),
    row("missed", "QA", f"Entry costs 12 euros {MISSED}.", 1, MISSED),
    row("closed", "Summary", "The museum is closed on Mondays.", 0),
]


def write(path: Path, rows: list[dict[str, Any]], *extra_lines: str) -> Path:
    lines = [json.dumps(r) for r in rows] + list(extra_lines)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def labelled(tmp_path: Path) -> Path:
    return write(tmp_path / "labelled.jsonl", ROWS)


def test_the_offline_judge_on_a_labelled_file(labelled: Path) -> None:
    result = benchmark_judge(labelled, "offline")

    assert (result.path, result.judge, result.rows) == (str(labelled), "offline", 6)
    # The default rule is vera eval's: the answer verdict.
    assert result.rule == "answer_verdict"
    assert list(result.groups) == ["all", "QA", "Summary"]
    # Every rule is measured; `groups` is the chosen one's.
    assert list(result.rules) == ["answer_verdict", "faithfulness", "any_claim"]
    assert result.rules["answer_verdict"] == result.groups
    assert result.ranked_by == "faithfulness_probability" and result.rows_without_probability == 0
    overall = result.overall
    # Caught: the invented fact and the wrong number; missed: the added condition. The
    # paraphrase, partly supported, passes faithfulness's threshold.
    assert (overall.tp, overall.fp, overall.fn, overall.tn) == (2, 0, 1, 3)
    assert (overall.n, overall.positives) == (6, 3)
    assert overall.precision == 1.0 and overall.recall == pytest.approx(2 / 3)
    assert overall.balanced_accuracy == pytest.approx((2 / 3 + 1) / 2)
    qa, summary = result.groups["QA"], result.groups["Summary"]
    assert (qa.tp, qa.fp, qa.fn, qa.tn) == (1, 0, 1, 1)
    assert (summary.tp, summary.fp, summary.fn, summary.tn) == (1, 0, 0, 2)
    assert qa.n + summary.n == overall.n and qa.positives + summary.positives == overall.positives
    assert result.samples_per_s > 0 and result.wall_seconds > 0


def test_an_answer_is_flagged_as_vera_eval_decides_and_ranked_by_its_probability(
    labelled: Path,
) -> None:
    rows = read_labelled_rows(labelled)
    report = vera.evaluate([r.sample for r in rows], ["faithfulness", "faithfulness_probability"])
    faithfulness = [r.results["faithfulness"] for r in report.samples]
    probability = [r.results["faithfulness_probability"].score for r in report.samples]
    labels = [r.label for r in rows]

    overall = benchmark_judge(labelled, "offline").overall

    failed = [f.passed is False for f in faithfulness]
    assert overall.tp == sum(f and y for f, y in zip(failed, labels, strict=True))
    assert overall.fp == sum(f and not y for f, y in zip(failed, labels, strict=True))
    assert all(p is not None for p in probability)
    assert overall.auroc == auroc([1 - (p or 0) for p in probability], labels)


def test_a_half_supported_answer_meets_faithfulness_but_any_claim_flags_it(
    tmp_path: Path,
) -> None:
    half = row("half", "QA", f"The museum opens at 9 am. {INVENTED}", 1, INVENTED)
    result = benchmark_judge(write(tmp_path / "half.jsonl", [half]), "offline")
    # Seed 000: one of two claims supported is 0.5, which meets the threshold of 0.5.
    assert (result.rules["faithfulness"]["all"].tp, result.rules["faithfulness"]["all"].fn) == (
        0,
        1,
    )
    assert result.rules["any_claim"]["all"].tp == 1


def test_a_judge_without_probabilities_is_ranked_by_faithfulness(tmp_path: Path) -> None:
    script = {
        "The museum opens at 9 am.": [("The museum opens at 9 am.", "FULLY_SUPPORTED")],
        INVENTED: [(INVENTED, "NO_EVIDENCE")],
        "Entry costs 12 euros.": [("Entry costs 12 euros.", "PARTIALLY_SUPPORTED")],
    }
    rows = [
        row("ok", "QA", "The museum opens at 9 am.", 0),
        row("bad", "QA", INVENTED, 1, INVENTED),
        row("part", "QA", "Entry costs 12 euros.", 1),
    ]
    result = benchmark_judge(write(tmp_path / "fake.jsonl", rows), FakeJudge(script))
    assert result.ranked_by == "faithfulness" and result.rows_without_probability == 0
    # 1 - faithfulness: 0, 1, 0.5 against labels 0, 1, 1.
    assert result.overall.auroc == auroc([0.0, 1.0, 0.5], [0, 1, 1]) == 1.0


def test_the_any_claim_rule_flags_an_answer_with_any_claim_not_fully_supported(
    labelled: Path,
) -> None:
    result = benchmark_judge(labelled, "offline", rule="any_claim")

    assert result.rule == "any_claim"
    overall = result.overall
    # The paraphrase's claim is only PARTIALLY_SUPPORTED, so it is flagged too.
    assert (overall.tp, overall.fp, overall.fn, overall.tn) == (2, 1, 1, 2)
    qa, summary = result.groups["QA"], result.groups["Summary"]
    assert (qa.tp, qa.fp, qa.fn, qa.tn) == (1, 0, 1, 1)
    assert (summary.tp, summary.fp, summary.fn, summary.tn) == (1, 1, 0, 1)
    # Ranked by the least supported claim's probability.
    rows = read_labelled_rows(labelled)
    report = vera.evaluate([r.sample for r in rows], ["faithfulness"])
    least = [1 - min(c.entailment or 0 for c in r.claims) for r in report.samples]
    assert overall.auroc == auroc(least, [r.label for r in rows])
    with pytest.raises(ValueError, match="rule must be one of"):
        benchmark_judge(labelled, "offline", rule="mean")  # type: ignore[arg-type]


def test_a_copied_answer_is_not_flagged_and_an_invented_fact_is(labelled: Path) -> None:
    copied = benchmark_judge(labelled, where=lambda r: r.sample.id == "copy").overall
    invented = benchmark_judge(labelled, where=lambda r: r.sample.id == "invented").overall
    assert (copied.n, copied.tn, copied.fp) == (1, 1, 0)
    assert (invented.n, invented.tp, invented.fn) == (1, 1, 0)
    assert copied.auroc is None  # one class only


def test_span_figures_count_characters_over_rows_with_span_labels(labelled: Path) -> None:
    span = benchmark_judge(labelled).span
    assert span is not None
    # The paraphrase has no span labels, so what was marked in it is not counted.
    assert span.rows == 5
    assert span.gold_chars == len(INVENTED) + len(WRONG) + len(MISSED)
    assert span.marked_chars == span.overlap_chars == len(INVENTED) + len(WRONG)
    assert span.precision == 1.0
    assert span.recall == pytest.approx(70 / 80)


def test_no_span_figures_without_span_labels(tmp_path: Path) -> None:
    path = write(tmp_path / "plain.jsonl", [{**r, "hallucinated_spans": None} for r in ROWS])
    result = benchmark_judge(path)
    assert result.span is None and result.overall.tp == 2


def test_figures_of_outcomes_given_without_a_judge() -> None:
    sample = Sample(id="a", response="x" * 30, contexts=["c"])
    rows = [
        LabelledRow(sample, 1, "QA", spans=((10, 20),)),
        LabelledRow(sample, 0, None, spans=()),
    ]
    outcomes = [RowOutcome(True, 0.9, ((0, 10), (5, 15))), RowOutcome(False, 0.2)]
    groups, span = benchmark_figures(rows, outcomes)
    # A row without a task type counts only in "all".
    assert list(groups) == ["all", "QA"] and groups["QA"].n == 1
    assert groups["all"].auroc == 1.0 and groups["QA"].auroc is None
    assert span is not None
    # Characters 5-9 are inside both marked spans and count once.
    assert (span.marked_chars, span.gold_chars, span.overlap_chars) == (15, 10, 5)
    with pytest.raises(ValueError, match="2 rows but 1 outcomes"):
        benchmark_figures(rows, outcomes[:1])


@pytest.mark.parametrize(
    ("line", "field", "problem"),
    [
        ('{"id": "x", "contexts": ["c"], "response": "r"}', "label", "missing"),
        ('{"id": "x", "contexts": ["c"], "response": "r", "label": 2}', "label", "got 2"),
        ('{"id": "x", "contexts": ["c"], "response": "r", "label": "1"}', "label", "got '1'"),
        ('{"id": "x", "contexts": ["c"], "label": 1}', "response", "missing"),
        ('{"id": "x", "contexts": [], "response": "r", "label": 1}', "contexts", "empty"),
        ('{"id": "x", "contexts": ["c"], "response": "r", "label": 1', None, "invalid JSON"),
        (
            '{"contexts": ["c"], "response": "r", "label": 1, '
            '"hallucinated_spans": [{"start": 0, "end": 5}]}',
            "hallucinated_spans[0]",
            "not within the response's 1 characters",
        ),
        (
            '{"contexts": ["c"], "response": "r", "label": 1, '
            '"hallucinated_spans": [{"start": "a", "end": 1}]}',
            "hallucinated_spans[0].start",
            "expected a character offset",
        ),
        (
            '{"contexts": ["c"], "response": "r", "label": 1, "task_type": "all"}',
            "task_type",
            "overall",
        ),
    ],
)
def test_a_bad_row_names_the_file_the_line_and_the_field(
    tmp_path: Path, line: str, field: str | None, problem: str
) -> None:
    path = write(tmp_path / "bad.jsonl", ROWS[:2], "", line)
    with pytest.raises(DatasetRowError) as caught:
        benchmark_judge(path)
    error = caught.value
    # Line 3 is blank and skipped; the bad row is on line 4.
    assert (error.path, error.location, error.field) == (str(path), "line 4", field)
    assert problem in error.problem
    assert str(error).startswith(f"{path}: line 4")


def test_limit_stops_reading_before_a_later_bad_row(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", ROWS[:2], '{"label": "?"}')
    assert benchmark_judge(path, limit=2).rows == 2
    with pytest.raises(ValueError, match="limit must be at least 1"):
        benchmark_judge(path, limit=0)


def test_an_empty_file_or_filter_is_an_error(tmp_path: Path, labelled: Path) -> None:
    with pytest.raises(DatasetError, match="no labelled rows"):
        benchmark_judge(write(tmp_path / "empty.jsonl", []))
    with pytest.raises(DatasetError, match="no labelled rows that the row filter keeps"):
        benchmark_judge(labelled, where=lambda r: False)


def test_a_judge_object_and_the_async_form(labelled: Path) -> None:
    async def inside_a_loop() -> JudgeBenchmark:
        with pytest.raises(RuntimeError, match="abenchmark_judge"):
            benchmark_judge(labelled)
        return await abenchmark_judge(labelled, OfflineJudge(learned=True), concurrency=2)

    result = asyncio.run(inside_a_loop())
    assert result.judge == "offline:learned" and result.rows == 6


def test_vera_benchmark_prints_the_table_and_writes_the_json(
    labelled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no vera.toml of the checkout's
    monkeypatch.delenv("VERA_JUDGE", raising=False)
    figures = tmp_path / "out" / "figures.json"

    result = CliRunner().invoke(app, ["benchmark", str(labelled), "--json", str(figures)])

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # A table per rule, the chosen one (the answer verdict) first, each with every group.
    table = [[c.strip() for c in line.strip("│ ").split("│")] for line in lines if "│" in line]
    assert [row[0] for row in table] == ["all", "QA", "Summary"] * 3
    cells = {row[0]: row[1:] for row in table[:3]}
    mean_cells = {row[0]: row[1:] for row in table[3:6]}
    any_claim_cells = {row[0]: row[1:] for row in table[6:]}
    text = " ".join(result.stdout.split())
    assert (
        text.index("Rule answer-verdict: flagged when a claim is NO_EVIDENCE or CONTRADICTED")
        < text.index("Rule faithfulness: flagged when faithfulness is below its threshold")
        < text.index("Rule any-claim: flagged when a claim is not fully supported")
    )
    # On these rows the mean at 0.5 and the answer verdict agree: each unfaithful answer has
    # one claim, so its mean fails exactly when the claim is unsupported.
    assert mean_cells == cells
    assert "AUROC by faithfulness_probability" in text
    written = JudgeBenchmark.model_validate_json(figures.read_text(encoding="utf-8"))
    # n, unfaithful, precision, recall, F1, balanced accuracy, kappa, then AUROC as written.
    auroc_cell = f"{written.overall.auroc:.3f}"
    assert cells["all"] == ["6", "3", "1.000", "0.667", "0.800", "0.833", "0.667", auroc_cell]
    assert cells["QA"][:7] == ["3", "2", "1.000", "0.500", "0.667", "0.750", "0.400"]
    assert cells["Summary"][:2] == ["3", "1"]
    assert "Spans, by character (5 rows): precision 1.000, recall 0.875, F1 0.933" in lines
    assert written.rows == 6 and written.overall.fp == 0 and written.span is not None
    assert written.groups.keys() == {"all", "QA", "Summary"}
    # The paraphrase, partly supported, is flagged by any-claim only.
    assert any_claim_cells["all"][:3] == ["6", "3", "0.667"]
    assert written.rules["any_claim"]["all"].fp == 1

    any_claim = CliRunner().invoke(app, ["benchmark", str(labelled), "--rule", "any-claim"])
    assert any_claim.exit_code == 0, any_claim.output
    text = " ".join(any_claim.stdout.split())
    assert text.index("Rule any-claim") < text.index("Rule answer-verdict")


def test_vera_benchmark_on_a_bad_file_is_exit_2_with_the_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / "bad.jsonl", ROWS[:1], '{"contexts": ["c"], "response": "r"}')

    result = CliRunner().invoke(app, ["benchmark", str(path)])

    assert result.exit_code == 2
    assert f"{path}: line 2, field 'label': missing" in " ".join(result.stderr.split())
    assert result.stdout == ""


def test_vera_benchmark_when_the_judge_fails_is_exit_3_without_figures(
    labelled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def failing(*args: object, **kwargs: object) -> JudgeBenchmark:
        raise JudgeError("the judge answered nothing for row 'copy'")

    monkeypatch.setattr("vera.cli._benchmark.benchmark_judge", failing)
    figures = tmp_path / "figures.json"

    result = CliRunner().invoke(app, ["benchmark", str(labelled), "--json", str(figures)])

    assert result.exit_code == 3
    assert "the judge answered nothing for row 'copy'" in result.stderr
    assert not figures.exists() and result.stdout == ""


class _HalfProbabilityJudge(FakeJudge):
    """A fake that gives a probability of support to the claims of some answers only, as a
    cascade does when it sends every claim of an answer to its LLM."""

    def __init__(self, script: dict[str, list[tuple[str, str]]], probable: dict[str, float]):
        super().__init__(script)
        self.probable = probable

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        found = await super().verify_claims(claims, contexts)
        return [
            v.model_copy(update={"entailment": self.probable.get(c.text)})
            for c, v in zip(claims, found, strict=True)
        ]


def test_rows_without_probabilities_are_ranked_by_faithfulness_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = {
        "The museum opens at 9 am.": [("The museum opens at 9 am.", "FULLY_SUPPORTED")],
        INVENTED: [(INVENTED, "NO_EVIDENCE")],
        WRONG: [(WRONG, "CONTRADICTED")],
    }
    rows = [
        row("ok", "QA", "The museum opens at 9 am.", 0),
        row("bad", "QA", INVENTED, 1, INVENTED),
        row("wrong", "QA", WRONG, 1, WRONG),
    ]
    judge = _HalfProbabilityJudge(script, {"The museum opens at 9 am.": 0.9, INVENTED: 0.3})
    path = write(tmp_path / "mixed.jsonl", rows)
    result = benchmark_judge(path, judge)
    assert result.ranked_by == "faithfulness_probability"
    assert result.rows_without_probability == 1  # "wrong": ranked by 1 - faithfulness = 1
    assert result.overall.auroc == auroc([0.1, 0.7, 1.0], [0, 1, 1]) == 1.0

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("vera.cli._benchmark.benchmark_judge", lambda *a, **k: result)
    shown = CliRunner().invoke(app, ["benchmark", str(path)])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "AUROC by faithfulness_probability (1 row without probabilities by faithfulness)" in text


def test_the_answer_verdict_flags_one_invented_claim_beside_a_true_one(tmp_path: Path) -> None:
    # One supported and one invented claim: the mean, 0.5, meets faithfulness's threshold;
    # the answer verdict, vera eval's pass or fail, does not let it pass.
    half = row("half", "QA", f"The museum opens at 9 am. {INVENTED}", 1, INVENTED)
    result = benchmark_judge(write(tmp_path / "half.jsonl", [half, ROWS[0]]), "offline")
    assert result.rules["answer_verdict"]["all"].tp == 1
    assert result.rules["faithfulness"]["all"].tp == 0
