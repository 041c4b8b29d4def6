"""Rubric metrics: the formula over hand-written verdicts, the not-applicable cases, and rubrics
read from TOML. The verdicts here are written by hand (no judge): the score is VERA's
arithmetic over them, so each expected value is worked out in the test's docstring."""

from pathlib import Path

import pytest

import vera
from vera import Claim, ConfigError, RunPlan, Sample, Settings
from vera._plan import build_plan
from vera._types import RubricAnswers, RubricVerdict
from vera.judges import Checklist, ItemVerdict, LLMJudge, RubricItem, create_judge
from vera.metrics import ClaimAnalysis, MetricStatus, Rubric, create_metric, load_rubrics

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

MET, NOT_MET, NA = RubricVerdict.MET, RubricVerdict.NOT_MET, RubricVerdict.NOT_APPLICABLE

SAMPLE = Sample(id="s", query="q?", response="One. Two.", contexts=["ctx"], category="legal")
ITEMS = (
    RubricItem(id="a", text="Cites the clause.", weight=2.0),
    RubricItem(id="b", text="Gives no legal advice."),
    RubricItem(id="c", text="Mentions tax where asked."),
)


def analysis_with(rubric: Rubric, *verdicts: ItemVerdict, claims: int = 0) -> ClaimAnalysis:
    checklist = rubric.checklist()
    assert checklist is not None
    answers = RubricAnswers(checklist=checklist, verdicts=verdicts)
    found = tuple(Claim(id=f"c{n}", text=f"claim {n}") for n in range(1, claims + 1))
    return ClaimAnalysis(claims=found, rubrics=(answers,), judge="openai:m")


def test_answer_scope_is_the_weighted_share_of_applicable_items_met() -> None:
    """a (weight 2) MET, b (1) NOT_MET, c NOT_APPLICABLE: 2 / (2 + 1) = 0.667; fails the
    default threshold of 1.0 (every item met)."""
    rubric = Rubric(name="house_style", items=ITEMS)
    analysis = analysis_with(
        rubric,
        ItemVerdict(item_id="a", verdict=MET, quote="One."),
        ItemVerdict(item_id="b", verdict=NOT_MET, quote="Two."),
        ItemVerdict(item_id="c", verdict=NA),
    )
    result = rubric.score(SAMPLE, analysis)
    assert result.score == pytest.approx(2 / 3)
    assert result.passed is False
    assert result.reason == "1 of 2 applicable items met; not met: b (Gives no legal advice.)"
    assert result.details["fingerprint"] == rubric.checklist().fingerprint  # type: ignore[union-attr]
    assert result.details["written_by"] == "user"
    assert [v["quote"] for v in result.details["verdicts"]] == ["One.", "Two.", ""]


def test_claim_scope_scores_pairs_and_lists_each_claim_that_breaks_an_item() -> None:
    """Two claims x items a (2), b (1): c1 meets both, c2 breaks b and a is not applicable to
    it. Pairs: (c1,a) 2 met, (c1,b) 1 met, (c2,b) 1 not met: 3 / 4 = 0.75. c1's own share 1.0,
    c2's 0.0."""
    rubric = Rubric(name="per_claim", items=ITEMS[:2], scope="claim", threshold=0.7)
    analysis = analysis_with(
        rubric,
        ItemVerdict(item_id="a", claim_id="c1", verdict=MET),
        ItemVerdict(item_id="b", claim_id="c1", verdict=MET),
        ItemVerdict(item_id="a", claim_id="c2", verdict=NA),
        ItemVerdict(item_id="b", claim_id="c2", verdict=NOT_MET, quote="Two."),
        claims=2,
    )
    result = rubric.score(SAMPLE, analysis)
    assert result.score == pytest.approx(0.75)
    assert result.passed is True
    assert result.details["breaking"] == {"c2": ["b"]}
    assert result.claim_weights == {"c1": 1.0, "c2": 0.0}
    assert result.reason == "1 of 2 claims break no item; claim c2 breaks item b"


def test_no_applicable_item_is_not_applicable_rather_than_a_score() -> None:
    rubric = Rubric(name="house_style", items=ITEMS[:1])
    result = rubric.score(SAMPLE, analysis_with(rubric, ItemVerdict(item_id="a", verdict=NA)))
    assert result.status is MetricStatus.NOT_APPLICABLE
    assert result.score is None


def test_a_judge_without_rubric_verdicts_makes_it_not_applicable_naming_the_judge() -> None:
    rubric = Rubric(name="house_style", criteria="Be polite.")
    result = rubric.score(SAMPLE, ClaimAnalysis(judge="offline"))
    assert result.status is MetricStatus.NOT_APPLICABLE
    assert "judge offline answers no rubric items" in result.reason
    assert "LLM judge" in result.reason


def test_categories_it_does_not_apply_to_and_a_missing_reference_are_not_applicable() -> None:
    other = Rubric(name="tax_rules", criteria="Be exact.", applies_to=("tax",))
    result = other.score(SAMPLE, ClaimAnalysis(judge="openai:m"))
    assert result.status is MetricStatus.NOT_APPLICABLE
    assert result.reason == "applies to tax; this sample's category is legal"
    compared = Rubric(name="same_figures", criteria="Same figure as expected.", reference=True)
    result = compared.score(SAMPLE, ClaimAnalysis(judge="openai:m"))
    assert result.status is MetricStatus.NOT_APPLICABLE
    assert "needs the sample field `reference`" in result.reason


def test_a_rubric_needs_criteria_or_items_and_a_plain_name() -> None:
    with pytest.raises(ValueError, match="needs criteria or items"):
        Rubric(name="empty")
    with pytest.raises(ValueError, match="must start with a letter"):
        Rubric(name="no spaces", criteria="x")


def test_rubrics_load_from_toml_with_items_written_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "rubrics.toml"
    path.write_text(
        '[[rubric]]\nname = "plain"\ncriteria = "No jargon."\nscope = "claim"\n\n'
        '[[rubric]]\nname = "checked"\n[[rubric.items]]\nid = "1"\ntext = "Cites a source."\n'
        "weight = 2\n"
    )
    plain, checked = load_rubrics(path)
    assert (plain.name, plain.scope, plain.checklist()) == ("plain", "claim", None)
    assert checked.checklist() is not None
    assert checked.items == (RubricItem(id="1", text="Cites a source.", weight=2.0),)


def test_a_wrong_rubric_table_names_the_file_table_and_field(tmp_path: Path) -> None:
    path = tmp_path / "rubrics.toml"
    path.write_text(
        '[[rubric]]\nname = "ok"\ncriteria = "x"\n\n[[rubric]]\nname = "bad"\n'
        'criteria = "x"\nscope = "sentence"\n'
    )
    with pytest.raises(ConfigError, match=r"rubrics.toml: \[\[rubric\]\] number 2 field 'scope'"):
        load_rubrics(path)


def test_the_fingerprint_of_written_items_changes_with_any_edit() -> None:
    first = Checklist.of_items("r", ITEMS, "answer")
    edited = Checklist.of_items("r", (ITEMS[0].model_copy(update={"text": "Cites it."}),), "answer")
    assert first.fingerprint == Checklist.of_items("r", ITEMS, "answer").fingerprint
    assert first.fingerprint != edited.fingerprint
    assert first.fingerprint != Checklist.of_items("r", ITEMS, "claim").fingerprint


def test_a_plan_carries_each_rubric_whole_so_a_stored_plan_rebuilds_it() -> None:
    """Rubrics of the settings join the default metrics; each spec holds the rubric's
    definition as values, and `create_metric` rebuilds the same rubric from it."""
    rubric = Rubric(name="plain", items=ITEMS, scope="claim", threshold=0.8)
    plan = build_plan(settings=Settings(rubric=(rubric,)))
    assert [spec.name for spec in plan.metrics] == ["faithfulness", "plain"]
    stored = RunPlan.model_validate_json(plan.model_dump_json())
    rebuilt = create_metric(stored.metrics[1].name, **stored.metrics[1].options)
    assert rebuilt == rubric
    assert [
        s.name for s in build_plan(metrics=["faithfulness"], settings=plan.settings).metrics
    ] == ["faithfulness"]


def test_goal_completion_is_named_not_taken_by_all_and_a_rubric_may_not_take_a_metric_name() -> (
    None
):
    named = build_plan(metrics=["goal_completion"], settings=Settings()).metrics
    assert [spec.name for spec in named] == ["goal_completion"]
    assert "goal_completion" not in {s.name for s in build_plan(metrics=["all"]).metrics}
    clash = Settings(rubric=(Rubric(name="faithfulness", criteria="x"),))
    with pytest.raises(ConfigError, match="rubric 'faithfulness' has the name of a metric"):
        build_plan(settings=clash)


def test_a_run_where_no_metric_applies_to_any_sample_is_incomplete_not_a_pass() -> None:
    """Rubrics alone with the offline judge measure nothing: exit 3 with the reason, never 0;
    beside a metric that scores, the rubric's not-applicable samples are only reported."""
    rubric = Rubric(name="polite", criteria="The answer is polite.")
    data = vera.load_dataset("example")
    alone = vera.run_evaluation(data, [rubric], history=False)
    assert alone.exit_code == 3
    assert alone.incomplete is not None and "no metric applied" in alone.incomplete
    assert "rubric needs an LLM judge" in alone.incomplete
    assert alone.remedy is not None and "vera metrics" in alone.remedy
    beside = vera.run_evaluation(data, [rubric, "faithfulness"], history=False)
    assert beside.incomplete is None and beside.exit_code == 1  # example's planted answers


@pytest.mark.parametrize(
    ("toml", "rides"),
    [
        ("", True),
        ("judge_batch_rubrics = false\n", False),
        ('judge_mode = "per_claim"\n', False),
        ("judge_samples = 3\n", False),
    ],
)
def test_rubric_items_ride_on_the_verification_in_batched_mode_with_one_draw_unless_turned_off(
    tmp_path: Path, toml: str, rides: bool
) -> None:
    """vera.toml's judge_batch_rubrics reaches the LLM judge; batching applies only where
    the verification is one call on the sample's contexts (batched mode, one draw)."""
    (tmp_path / "vera.toml").write_text('judge = "openai:gpt-4o-mini"\n' + toml)
    settings = vera.load_settings(directory=tmp_path, environ={})
    judge = create_judge(settings.judge, settings)
    assert isinstance(judge, LLMJudge)
    assert judge.rides_rubrics is rides
