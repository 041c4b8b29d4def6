"""How well a judge finds unfaithful responses, on human labels (RAGTruth, SummEdits, HaluEval).

Reads JSONL files in the format of `benchmarks/data/README.md` from the path given (VERA
never depends on them otherwise), runs a judge on every row, and reports, for the unfaithful
class: precision, recall, F1, balanced accuracy and AUROC, overall and per task type; the
character-level F1 of the claims marked unsupported against `hallucinated_spans` (RAGTruth);
and throughput. The measuring is `vera._run`'s (also `vera benchmark FILE`); this
script adds what only VERA's own training needs: RAGTruth folds and another model card.

By default a response is flagged by the mean rule: when its faithfulness score (the seeds'
mean of verdict weights) fails the metric's default threshold (0.5), what `--threshold`
gates (`vera eval`'s own pass or fail is the answer verdict, `--answer-verdict` below), and
ranked for AUROC by 1 - faithfulness_probability where the judge gives claim probabilities (else 1 -
faithfulness; `ranked_by` says which). `--rule any-claim` flags it when any claim is not
FULLY_SUPPORTED and ranks it by `1 - min support` over its claims (`vera._run`
defines them; `vera benchmark` prints them side by side, the answer verdict first).

`--answer-verdict` reports instead what a user acts on, the ANSWER VERDICT computed from the
claim verdicts (the library's `vera._results.claims_verdict`: unfaithful iff any claim is
NO_EVIDENCE or CONTRADICTED; PARTIALLY_SUPPORTED counted as supported by one rule and as
unsupported by the other, both shown): balanced accuracy per task type and overall, AUROC of
the ranking score (`1 - faithfulness_probability`, the product of the claims' probabilities of
support, and `1 - min support` beside it), and the rows the judge refused for their language,
which are left out of the other figures and counted, never scored as faithful.

    .venv/bin/python benchmarks/judge_accuracy.py benchmarks/data/ragtruth_dev.jsonl \
        --answer-verdict --fold 0

`--fold 1` keeps only the RAGTruth rows whose source document is in fold 1 of the fixed split
the offline judge's verifier was trained with (`training/verifier/`): documents it never saw.

    .venv/bin/python benchmarks/judge_accuracy.py benchmarks/data/ragtruth_dev.jsonl

`training/verifier/evaluate.py` scores the offline judges by the seeds' mean-of-weights rule
from their verdicts directly, per task type, whatever rule `vera._run` uses.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vera import (
    ClaimVerdict,
    JudgeBenchmark,
    VeraError,
    Verdict,
    benchmark_judge,
    load_settings,
)
from vera._analysis import analyse_claims
from vera._results import claims_verdict
from vera._run import (
    GroupFigures,
    LabelledRow,
    RowOutcome,
    SpanFigures,
    benchmark_figures,
    labelled_row,
    read_labelled_rows,
)
from vera._stats import Confusion, auroc
from vera._types import PartialRule
from vera.judges import Judge, OfflineJudge, UnsupportedLanguageError, create_judge

WHITEBOX = (
    "the work plan; the report builder, on hand-made results; the statistics formulas; "
    "the labelled-file reader"
)

# `auroc` is imported from here by training/verifier/.
__all__ = ["auroc", "fold_of", "source_of", "summarise"]


def source_of(row_id: str) -> str:
    """A RAGTruth row's source document: every generator's answer about it shares one."""
    match = re.match(r"ragtruth-(\d+)-", row_id)
    return match.group(1) if match else row_id


def fold_of(row_id: str) -> int:
    """A fixed two-way split by source document; the verifier trains on fold 0 only."""
    return hashlib.md5(source_of(row_id).encode()).digest()[0] % 2


def flat(groups: Mapping[str, GroupFigures], span: SpanFigures | None) -> dict[str, Any]:
    """The figures as this script has always written them: each group a top-level key, then
    "span" where there are span figures."""
    figures: dict[str, Any] = {name: g.model_dump() for name, g in groups.items()}
    if span is not None:
        figures["span"] = span.model_dump()
    return figures


def summarise(
    rows: Sequence[Mapping[str, Any]], outcomes: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The figures for `outcomes` (one `{"flagged", "score", "spans"}` per row, as
    training/verifier/ computes them without a judge), by `vera._run`."""
    labelled = [labelled_row(row, location=f"row {i}", index=i) for i, row in enumerate(rows, 1)]
    judged = [
        RowOutcome(
            flagged=bool(o["flagged"]),
            score=float(o["score"]),
            marked=tuple((int(s[0]), int(s[1])) for s in o["spans"]),
        )
        for o in outcomes
    ]
    return flat(*benchmark_figures(labelled, judged))


def figures_of(result: JudgeBenchmark, args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"judge": result.judge, "rule": result.rule, "rows": result.rows}
    if result.rule == "faithfulness":
        figures["ranked_by"] = result.ranked_by
    if args.model is not None:
        figures["model"] = str(args.model)
    if args.min_support is not None:
        figures["min_support"] = args.min_support
    figures.update(flat(result.groups, result.span))
    figures["samples_per_s"] = result.samples_per_s
    return figures


# What a verdict without a probability counts for in the ranking score (an LLM judge's).
_STAND_IN = {
    Verdict.FULLY_SUPPORTED: 1.0,
    Verdict.PARTIALLY_SUPPORTED: 0.5,
    Verdict.NO_EVIDENCE: 0.0,
    Verdict.CONTRADICTED: 0.0,
}
PARTIAL_RULES = {
    "partial_supported": PartialRule.SUPPORTED,
    "partial_unsupported": PartialRule.UNSUPPORTED,
}
"""The two ways PARTIALLY_SUPPORTED can count in the answer verdict, by name."""


def answer_verdict(verdicts: Sequence[ClaimVerdict], rule: PartialRule) -> str:
    """ "faithful", "unfaithful" or "no_claims": the library's answer verdict
    (`vera._results.claims_verdict`) on the claim verdicts, PARTIALLY_SUPPORTED counting by
    `rule`."""
    found = [v.verdict for v in verdicts]
    return claims_verdict(found, [""] * len(found), rule).status.value


@dataclass(frozen=True)
class Answer:
    """One row's claim verdicts, or None where the judge refused the row for its language."""

    row: LabelledRow
    verdicts: tuple[ClaimVerdict, ...] | None

    def probability(self) -> float:
        """The probability that every claim is supported (1 without claims)."""
        assert self.verdicts is not None
        return math.prod(_support(v) for v in self.verdicts)

    def least(self) -> float:
        assert self.verdicts is not None
        return min((_support(v) for v in self.verdicts), default=1.0)


def _support(verdict: ClaimVerdict) -> float:
    return verdict.entailment if verdict.entailment is not None else _STAND_IN[verdict.verdict]


async def judge_answers(
    rows: Sequence[LabelledRow], judge: Judge, concurrency: int
) -> list[Answer]:
    slots = asyncio.Semaphore(concurrency)

    async def one(row: LabelledRow) -> Answer:
        async with slots:
            try:
                _, verdicts = await analyse_claims(row.sample, judge)
            except UnsupportedLanguageError:
                return Answer(row, None)
            return Answer(row, verdicts)

    return list(await asyncio.gather(*(one(row) for row in rows)))


def answer_figures(answers: Sequence[Answer]) -> dict[str, Any]:
    """Per group ("all", then each task type): rows, rows refused for their language, and
    over the rest the answer verdict's balanced accuracy by each partial rule and the AUROC
    of the ranking scores."""
    groups: dict[str, list[Answer]] = {"all": list(answers)}
    for answer in answers:
        groups.setdefault(answer.row.task_type or "?", []).append(answer)
    figures: dict[str, Any] = {}
    for name, members in groups.items():
        judged = [a for a in members if a.verdicts is not None]
        labels = [a.row.label for a in judged]
        group: dict[str, Any] = {
            "n": len(members),
            "positives": sum(labels),
            "refused_for_language": len(members) - len(judged),
        }
        for rule, partial in PARTIAL_RULES.items():
            flagged = [answer_verdict(a.verdicts or (), partial) == "unfaithful" for a in judged]
            group[f"bacc_{rule}"] = round(Confusion.of(flagged, labels).balanced_accuracy, 4)
        for score, of in (("auroc", Answer.probability), ("auroc_min_support", Answer.least)):
            value = auroc([1.0 - of(a) for a in judged], labels)
            group[score] = None if value is None else round(value, 4)
        figures[name] = group
    return figures


def print_answer_table(figures: Mapping[str, Mapping[str, Any]]) -> None:
    print("group        n  refused  BAcc(P=sup)  BAcc(P=unsup)  AUROC  AUROC(min)")
    for name, g in figures.items():
        print(
            f"{name:<10} {g['n']:>4} {g['refused_for_language']:>7}  "
            f"{g['bacc_partial_supported']:>11.3f}  {g['bacc_partial_unsupported']:>13.3f}  "
            f"{g['auroc'] or 0:>5.3f}  {g['auroc_min_support'] or 0:>10.3f}"
        )


def run_answer_verdict(args: argparse.Namespace, judge: Judge) -> dict[str, Any]:
    fold = args.fold
    rows = read_labelled_rows(
        args.path,
        limit=args.limit or None,
        where=None if fold is None else (lambda row: fold_of(row.sample.id) == fold),
    )
    answers = asyncio.run(judge_answers(rows, judge, args.concurrency))
    return {"judge": judge.spec, "rows": len(rows), "fold": fold, **answer_figures(answers)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--judge", default="offline")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument(
        "--rule",
        choices=("faithfulness", "any-claim"),
        default="faithfulness",
        help="flag by faithfulness below its threshold, or by any claim not fully supported",
    )
    parser.add_argument(
        "--answer-verdict",
        action="store_true",
        help="report the answer verdict's figures (both partial rules) and refused rows",
    )
    parser.add_argument("--fold", type=int, choices=(0, 1), help="only RAGTruth rows of this fold")
    parser.add_argument(
        "--model",
        type=Path,
        help="an offline judge with this support_model.json (train_features.py --write-heldout)",
    )
    parser.add_argument(
        "--min-support",
        type=float,
        help="offline:learned's threshold (vera eval --offline-min-support), to try others",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    settings = load_settings({"judge": args.judge, "offline_min_support": args.min_support})
    judge: Judge | str = args.judge
    if args.model is not None:
        spec = args.judge.replace(" ", "").lower()
        if spec not in ("offline", "offline:learned"):
            raise SystemExit("--model needs --judge offline or offline:learned")
        learned = spec == "offline:learned"
        judge = OfflineJudge(
            learned=learned,
            min_support=args.min_support if learned else None,
            model_path=args.model,
        )
    if args.answer_verdict:
        built = judge if not isinstance(judge, str) else create_judge(judge, settings)
        try:
            answers = run_answer_verdict(args, built)
        except VeraError as exc:
            raise SystemExit(f"error: {exc}") from None
        print_answer_table({k: v for k, v in answers.items() if isinstance(v, dict)})
        if args.out:
            args.out.write_text(json.dumps(answers, indent=2) + "\n", encoding="utf-8")
        return
    fold = args.fold
    try:
        result = benchmark_judge(
            args.path,
            judge,
            settings=settings,
            concurrency=args.concurrency,
            limit=args.limit or None,
            where=None if fold is None else (lambda row: fold_of(row.sample.id) == fold),
            rule="any_claim" if args.rule == "any-claim" else "faithfulness",
        )
    except VeraError as exc:
        raise SystemExit(f"error: {exc}") from None
    figures = figures_of(result, args)
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
