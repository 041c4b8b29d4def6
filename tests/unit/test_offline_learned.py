"""The offline judge's learned support model: evidence selection, features, the shipped
weights, verdicts. These run the real shipped model, not a stand-in."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vera import Claim, ClaimVerdict, Verdict, load_settings
from vera.judges import OfflineJudge, create_judge
from vera.judges._offline import (
    FEATURES,
    GAP,
    LONG,
    SampleFacts,
    SupportModel,
    claim_features,
    evidence_for,
    load_model,
    passages,
    shipped_path,
)

WHITEBOX = "the offline judge's own parts"

CONTEXT = (
    "The warranty covers parts for 24 months from the date of purchase. "
    "Labour is covered for the first 12 months only. "
    "The store opens at nine in the morning on weekdays. "
    "Claims must be filed with the original receipt."
)


def test_evidence_is_the_sentences_sharing_most_words_in_context_order() -> None:
    evidence = evidence_for("Labour is covered for 12 months with the receipt.", [CONTEXT])
    labour = evidence.index("Labour is covered for the first 12 months only.")
    assert labour < evidence.index("original receipt")  # context order, not rank order
    # The store's hours share no word with the claim, so they are not evidence.
    assert "store" not in evidence
    # Non-adjacent sentences are joined with a visible gap.
    assert GAP in evidence


def test_evidence_respects_its_budget_but_always_keeps_the_best_sentence() -> None:
    evidence = evidence_for("warranty parts 24 months purchase", [CONTEXT], max_chars=20)
    assert evidence == "The warranty covers parts for 24 months from the date of purchase."


def test_a_structured_context_is_cut_into_fields_at_commas() -> None:
    record = ", ".join(f'"field{i}": "value number {i}"' for i in range(40))
    found = passages([record])
    assert len(found) > 1
    assert all(p.end - p.start <= LONG for p in found)
    evidence = evidence_for("field7 has value number 7", [record], max_chars=120)
    assert '"field7": "value number 7"' in evidence
    assert len(evidence) < len(record)


def test_no_context_gives_no_evidence() -> None:
    assert evidence_for("anything at all", []) == ""


def test_shipped_model_is_a_calibrated_logistic_model_over_the_features() -> None:
    model = load_model()
    data = json.loads(shipped_path().read_text())
    assert tuple(data["features"]) == FEATURES
    assert 0.5 <= model.min_support < 1.0
    claims = [Claim("c1", "Labour is covered for the first 12 months.", None)]
    sample = SampleFacts.of(claims, [CONTEXT])
    lexical = ClaimVerdict("c1", Verdict.FULLY_SUPPORTED)
    x = claim_features(claims[0], 0, 1, lexical, sample)
    assert len(x) == len(FEATURES)
    z = data["intercept"] + sum(
        w * (v - m) / s
        for w, v, m, s in zip(data["weights"], x, data["mean"], data["scale"], strict=True)
    )
    assert model.support(x) == pytest.approx(1 - 1 / (1 + math.exp(-z)))


def test_words_no_context_holds_lower_the_support() -> None:
    model = load_model()
    claims = [
        Claim("c1", "Labour is covered for the first 12 months.", None),
        Claim("c2", "Labour is covered by Zurich insurers for accidental flooding.", None),
    ]
    sample = SampleFacts.of(claims, [CONTEXT])
    verdict = ClaimVerdict("c", Verdict.PARTIALLY_SUPPORTED)
    copied = claim_features(claims[0], 0, 2, verdict, sample)
    invented = claim_features(claims[1], 0, 2, verdict, sample)
    assert copied[FEATURES.index("missing_share")] == 0.0
    assert invented[FEATURES.index("missing_share")] > 0.5
    assert model.support(copied) > model.support(invented)


def test_a_model_for_other_features_is_refused(tmp_path: Path) -> None:
    data = json.loads(shipped_path().read_text())
    data["features"] = data["features"][:-1]
    path = tmp_path / "support_model.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="retrain"):
        SupportModel.read(path)


async def test_a_copied_claim_is_more_likely_supported_than_an_invented_one() -> None:
    judge = OfflineJudge(learned=True)
    claims = [
        Claim("c1", "The warranty covers parts for 24 months from the date of purchase.", None),
        Claim("c2", "The company was founded in Paris in 1850 by two brothers.", None),
    ]
    copied, invented = await judge.verify_claims(claims, [CONTEXT])
    assert copied.entailment is not None and invented.entailment is not None
    assert copied.entailment > invented.entailment
    assert copied.verdict is Verdict.FULLY_SUPPORTED
    assert invented.verdict is not Verdict.FULLY_SUPPORTED
    # The lexical alignment still supplies the quoted evidence.
    assert copied.evidence in CONTEXT and copied.context_index == 0
    # The reason gives the probability and what the words showed.
    assert (
        copied.reason == f"P(supported) = {copied.entailment:.2f}; context covers 7/7 content words"
    )


# Words alone do not settle it: three of its five content words are in the context.
PARAPHRASE = Claim("c1", "Labour repairs are covered during the first year.", None)


async def test_the_verdict_follows_the_support_thresholds() -> None:
    claims = [PARAPHRASE]
    lexical = await OfflineJudge().verify_claims(claims, [CONTEXT])
    assert lexical[0].verdict is Verdict.PARTIALLY_SUPPORTED
    p = (await OfflineJudge(learned=True).verify_claims(claims, [CONTEXT]))[0].entailment
    assert p is not None
    above = OfflineJudge(learned=True, min_support=max(p - 0.01, 0.0), partial_probability=0.0)
    below = OfflineJudge(learned=True, min_support=min(p + 0.01, 1.0), partial_probability=0.0)
    none = OfflineJudge(learned=True, min_support=1.0, partial_probability=1.0)
    assert (await above.verify_claims(claims, [CONTEXT]))[0].verdict is Verdict.FULLY_SUPPORTED
    assert (await below.verify_claims(claims, [CONTEXT]))[0].verdict is (
        Verdict.PARTIALLY_SUPPORTED
    )
    assert (await none.verify_claims(claims, [CONTEXT]))[0].verdict is Verdict.NO_EVIDENCE


async def test_a_lexical_conflict_below_the_threshold_is_a_contradiction() -> None:
    judge = OfflineJudge(learned=True, min_support=1.0)
    claims = [Claim("c1", "Labour is covered for the first 18 months only.", None)]
    (verdict,) = await judge.verify_claims(claims, [CONTEXT])
    assert verdict.verdict is Verdict.CONTRADICTED
    assert verdict.entailment is not None


async def test_the_probability_decides_where_the_words_disagree() -> None:
    claims = [Claim("c1", "Labour is covered for the first 18 months only.", None)]
    lexical = await OfflineJudge().verify_claims(claims, [CONTEXT])
    assert lexical[0].verdict is Verdict.CONTRADICTED
    (lenient,) = await OfflineJudge(learned=True, min_support=0.0).verify_claims(claims, [CONTEXT])
    assert lenient.verdict is Verdict.FULLY_SUPPORTED
    # The conflict is still named, after each judge's own probability.
    conflict = lexical[0].reason.split("; ", 1)[1]
    assert conflict == "claim says 18 months; context says 12 months"
    assert lenient.reason.endswith(conflict)


async def test_no_context_means_zero_support() -> None:
    (verdict,) = await OfflineJudge(learned=True).verify_claims(
        [Claim("c1", "Water is wet.", None)], []
    )
    assert verdict.verdict is Verdict.NO_EVIDENCE
    assert verdict.entailment == 0.0


async def test_the_default_offline_judge_keeps_its_verdicts_and_gives_a_probability() -> None:
    learned = create_judge("offline:learned")
    assert isinstance(learned, OfflineJudge) and learned.learned
    judge = create_judge("offline")
    assert isinstance(judge, OfflineJudge) and not judge.learned
    claim = Claim("c1", "Labour is covered for the first 12 months.", None)
    (verdict,) = await judge.verify_claims([claim], [CONTEXT])
    (decided,) = await learned.verify_claims([claim], [CONTEXT])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED
    # The same model's probability; a supported claim's is not weighed down.
    assert verdict.entailment is not None and verdict.entailment == decided.entailment


async def test_another_model_file_brings_its_own_thresholds(tmp_path: Path) -> None:
    data = json.loads(shipped_path().read_text())
    data["thresholds"]["min_support"] = 1.0  # nothing is ever fully supported
    path = tmp_path / "support_model.json"
    path.write_text(json.dumps(data))
    judge = OfflineJudge(learned=True, model_path=path)
    assert isinstance(judge.model, SupportModel) and judge.min_support == 1.0
    shipped = OfflineJudge(learned=True, min_support=0.0)
    assert (await shipped.verify_claims([PARAPHRASE], [CONTEXT]))[0].verdict is (
        Verdict.FULLY_SUPPORTED
    )
    (verdict,) = await judge.verify_claims([PARAPHRASE], [CONTEXT])
    assert verdict.verdict is not Verdict.FULLY_SUPPORTED


def test_thresholds_are_checked() -> None:
    with pytest.raises(ValueError, match="min_support"):
        OfflineJudge(learned=True, min_support=1.5)


def test_the_threshold_comes_from_vera_toml_and_the_flag_wins(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text('judge = "offline:learned"\noffline-min-support = 0.6\n')
    settings = load_settings({}, directory=tmp_path, environ={})
    judge = create_judge(settings.judge, settings)
    assert isinstance(judge, OfflineJudge) and judge.min_support == 0.6
    flagged = load_settings({"offline_min_support": 0.9}, directory=tmp_path, environ={})
    assert create_judge(flagged.judge, flagged).min_support == 0.9  # type: ignore[attr-defined]
    plain = load_settings({}, directory=tmp_path / "nowhere", environ={})
    default = create_judge("offline:learned", plain)
    assert isinstance(default, OfflineJudge) and default.min_support == load_model().min_support
