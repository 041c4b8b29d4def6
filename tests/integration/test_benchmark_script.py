"""`benchmarks/judge_accuracy.py` as a user runs it, on a small file in the benchmarks' format
written here (the real benchmark data is never part of the test suite). The script wraps
`vera._run` (tested in tests/unit/test_judge_benchmark.py); what is its own is the
output it has always written, `--fold`, `--model`/`--min-support`, and `summarise`, which
training/verifier/ calls with outcomes it computed itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from judge_accuracy import auroc, fold_of, summarise  # noqa: E402

CONTEXT = "The museum opens at 9 am. Entry costs 12 euros. The museum is closed on Mondays."
INVENTED = "Visitors get a free audio guide in six languages."
WRONG = "Entry costs 40 euros."


def row(row_id: str, task: str, response: str, bad: str | None) -> dict[str, object]:
    spans = []
    if bad is not None:
        start = response.index(bad)
        spans.append({"start": start, "end": start + len(bad), "text": bad, "label_type": "x"})
    return {
        "id": row_id,
        "dataset": "ragtruth",
        "split": "test",
        "task_type": task,
        "query": "What should a visitor know?" if task == "QA" else "",
        "contexts": [CONTEXT],
        "response": response,
        "label": int(bad is not None),
        "hallucinated_spans": spans,
    }


# Each unfaithful answer is one bad claim, so its faithfulness (the seeds' mean of verdict
# weights) is 0 and fails; beside a supported claim it would be 0.5, which passes.
ROWS = [
    row("ragtruth-1-a", "QA", "The museum opens at 9 am. Entry costs 12 euros.", None),
    row("ragtruth-2-a", "QA", INVENTED, INVENTED),
    row("ragtruth-3-a", "Summary", "The museum is closed on Mondays.", None),
    row("ragtruth-4-a", "Summary", WRONG, WRONG),
]


def run(tmp_path: Path, *args: str, rows: list[dict[str, object]] = ROWS) -> dict[str, object]:
    data = tmp_path / "bench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "figures.json"
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks/judge_accuracy.py"),
            str(data),
            "--out",
            str(out),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    figures: dict[str, object] = json.loads(out.read_text())
    assert json.loads(result.stdout) == figures
    return figures


def test_the_offline_judge_on_a_file_it_is_given(tmp_path: Path) -> None:
    figures = run(tmp_path, "--judge", "offline")
    assert figures["judge"] == "offline" and figures["rows"] == 4
    assert figures["ranked_by"] == "faithfulness_probability"
    overall, qa, summary = figures["all"], figures["QA"], figures["Summary"]
    assert isinstance(overall, dict) and isinstance(qa, dict) and isinstance(summary, dict)
    # Both planted errors are caught and nothing faithful is flagged.
    assert (overall["precision"], overall["recall"], overall["f1"]) == (1.0, 1.0, 1.0)
    assert overall["auroc"] == 1.0 and (qa["n"], summary["n"]) == (2, 2)
    # The claims marked unsupported are exactly the sentences a person marked.
    span = figures["span"]
    assert isinstance(span, dict)
    assert (span["precision"], span["recall"], span["f1"]) == (1.0, 1.0, 1.0)
    assert isinstance(figures["samples_per_s"], float) and figures["samples_per_s"] > 0


def test_the_learned_judge_threshold_can_be_tried_from_the_command_line(tmp_path: Path) -> None:
    # Faithful, but in other words.
    paraphrase = row("ragtruth-5-a", "QA", "Admission is 12 euros.", None)
    rows = [*ROWS, paraphrase]
    # The threshold decides verdicts, so the dial is seen through the any-claim rule.
    learned = ("--judge", "offline:learned", "--rule", "any-claim")
    lenient = run(tmp_path, *learned, "--min-support", "0", rows=rows)
    strict = run(tmp_path, *learned, "--min-support", "1", rows=rows)
    assert (lenient["min_support"], strict["min_support"]) == (0.0, 1.0)
    assert lenient["rule"] == "any_claim"
    assert lenient["rows"] == strict["rows"] == 5
    loose, tight = lenient["all"], strict["all"]
    assert isinstance(loose, dict) and isinstance(tight, dict)
    assert loose["recall"] == 0.0 and loose["balanced_accuracy"] == 0.5  # nothing flagged
    # Every answer the words do not wholly hold is flagged; the two copied ones stay supported
    # whatever the threshold, as a claim whose words a context window holds is FULLY_SUPPORTED.
    assert tight["recall"] == 1.0 and (tight["tp"], tight["fp"], tight["tn"]) == (2, 1, 2)
    shipped = run(tmp_path, *learned, rows=rows)["all"]
    assert isinstance(shipped, dict) and shipped["recall"] == 1.0  # both planted errors caught
    limited = run(tmp_path, "--judge", "offline:learned", "--limit", "2", rows=rows)
    assert limited["rows"] == 2 and "min_support" not in limited
    assert limited["rule"] == "faithfulness"  # as vera eval decides, unless told otherwise


def test_auroc_counts_ties_half_and_needs_both_classes() -> None:
    assert auroc([0.9, 0.1], [1, 0]) == 1.0
    assert auroc([0.1, 0.9], [1, 0]) == 0.0
    assert auroc([0.5, 0.5], [1, 0]) == 0.5
    assert auroc([0.2, 0.3], [1, 1]) is None


def test_fold_keeps_only_the_rows_of_that_fold(tmp_path: Path) -> None:
    other = row("ragtruth-7-a", "QA", INVENTED, INVENTED)
    assert [fold_of(str(r["id"])) for r in [*ROWS, other]] == [0, 0, 0, 0, 1]
    held_out = run(tmp_path, "--fold", "1", rows=[*ROWS, other])
    overall = held_out["all"]
    assert held_out["rows"] == 1 and isinstance(overall, dict) and overall["tp"] == 1
    seen = run(tmp_path, "--fold", "0", rows=[*ROWS, other])
    assert seen["rows"] == 4 and seen["all"] == run(tmp_path)["all"]


def test_summarise_takes_outcomes_computed_without_a_judge() -> None:
    # As training/verifier/ calls it: rows as read from the file, outcomes as plain dicts.
    outcomes = [
        {"flagged": 0, "score": 0.1, "spans": []},
        {"flagged": 1, "score": 0.9, "spans": [[0, 14], [4, len(INVENTED)]]},
        {"flagged": 1, "score": 0.8, "spans": []},
        {"flagged": 1, "score": 0.4, "spans": []},
    ]
    figures = summarise(ROWS, outcomes)
    assert list(figures) == ["all", "QA", "Summary", "span"]
    assert (figures["all"]["precision"], figures["all"]["recall"]) == (2 / 3, 1.0)
    assert figures["QA"]["auroc"] == 1.0 and figures["Summary"]["auroc"] == 0.0
    assert figures["all"]["auroc"] == 3 / 4
    # The two marked spans overlap and cover the invented sentence and nothing else.
    assert figures["span"]["precision"] == 1.0
    assert figures["span"]["recall"] == len(INVENTED) / (len(INVENTED) + len(WRONG))


def test_the_answer_verdict_flags_an_answer_with_one_invented_claim(tmp_path: Path) -> None:
    # Beside a supported sentence, the invented one leaves the mean of verdict weights at 0.5,
    # which passes; the answer verdict (any claim NO_EVIDENCE or CONTRADICTED) does not.
    mixed = "The museum opens at 9 am. " + INVENTED
    polish = "Muzeum jest otwarte od dziewiątej rano i wstęp kosztuje dwanaście euro."
    rows = [
        *ROWS,
        row("ragtruth-5-a", "QA", mixed, INVENTED),
        {**row("ragtruth-6-a", "QA", polish, None), "hallucinated_spans": []},
    ]
    data = tmp_path / "bench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "answers.json"
    script = str(ROOT / "benchmarks/judge_accuracy.py")
    command = [sys.executable, script, str(data), "--answer-verdict", "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "BAcc(P=sup)" in result.stdout
    figures = json.loads(out.read_text())
    overall, qa = figures["all"], figures["QA"]
    # The Polish answer is refused for its language: counted, and left out of the figures.
    assert (overall["n"], overall["refused_for_language"], qa["refused_for_language"]) == (6, 1, 1)
    assert overall["positives"] == 3
    assert overall["bacc_partial_supported"] == 1.0 and overall["auroc"] == 1.0
