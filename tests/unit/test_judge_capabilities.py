"""What a judge can do is found by isinstance against small protocols, and a plan whose metrics
need what its judge cannot do is refused when it is built, naming the metric and the capability,
instead of failing midway through the run."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from tests.support.cli import run_vera
from tests.support.plugin import PLUGIN_MODULE, write_plugin

import vera
from vera import Bindings, Claim, ClaimVerdict, ConfigError, Verdict, run_plan
from vera._plan import DatasetRef, build_plan
from vera._run import build_components
from vera.judges import (
    JUDGE_REGISTRY,
    BaseJudge,
    Capability,
    CascadeJudge,
    OfflineJudge,
    Relevance,
    RelevanceVerdict,
)
from vera.judges._base import (
    ClaimJudge,
    RelevanceRater,
    as_judge,
    judge_capabilities,
    judge_matrix,
    relevance_rater,
)
from vera.testing import FakeJudge

WHITEBOX = "the engine's own parts"

ROW = {
    "id": "p",
    "query": "Where is Paris?",
    "response": "Paris is in France.",
    "contexts": ["Paris is the capital of France."],
}


class TwoMethods:
    """A judge of the least kind: only the two `ClaimJudge` methods, no base class."""

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        return [Claim("c1", response)]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        return [ClaimVerdict(c.id, Verdict.FULLY_SUPPORTED) for c in claims]


class NoRelevance(BaseJudge):
    """A subclass that keeps `BaseJudge`'s refusing `rate_relevance`."""

    name = "no-relevance"

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        return [Claim("c1", response)]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        return [ClaimVerdict(c.id, Verdict.FULLY_SUPPORTED) for c in claims]


def plan_for(tmp_path: Path, metrics: list[str]) -> vera.RunPlan:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    return build_plan(
        dataset=DatasetRef(source=str(data)),
        metrics=metrics,
        settings=vera.Settings(history=False),
    )


def test_a_bare_claim_judge_is_a_claim_judge_and_can_do_nothing_more() -> None:
    bare = TwoMethods()
    assert isinstance(bare, ClaimJudge) and not isinstance(bare, RelevanceRater)
    adapted = as_judge(bare)
    assert Capability.RATE_RELEVANCE not in judge_capabilities(adapted)


class TwoMethodsAndRelevance(TwoMethods):
    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        return [RelevanceVerdict(relevance=Relevance.RELEVANT) for _ in texts]


async def test_a_bare_judge_that_rates_relevance_keeps_that_capability_when_adapted() -> None:
    adapted = as_judge(TwoMethodsAndRelevance())
    assert Capability.RATE_RELEVANCE in judge_capabilities(adapted)
    [rated] = await relevance_rater(adapted).rate_relevance("q", ["t"])
    assert rated.relevance is Relevance.RELEVANT
    with pytest.raises(ConfigError, match="cannot rate relevance"):
        relevance_rater(as_judge(TwoMethods()))


def test_judges_that_rate_relevance_say_so_and_those_that_cannot_do_not() -> None:
    assert Capability.RATE_RELEVANCE in judge_capabilities(OfflineJudge())
    assert Capability.RATE_RELEVANCE in judge_capabilities(FakeJudge({}))
    assert judge_capabilities(NoRelevance()) == {Capability.VERIFY_MATRIX, Capability.PLAN_CALLS}


def test_a_cascade_rates_relevance_only_through_a_judge_that_can() -> None:
    assert Capability.RATE_RELEVANCE not in judge_capabilities(
        CascadeJudge(NoRelevance(), NoRelevance())
    )
    assert Capability.RATE_RELEVANCE in judge_capabilities(
        CascadeJudge(NoRelevance(), OfflineJudge())
    )


def test_a_judge_without_relevance_is_refused_when_the_plan_is_built(tmp_path: Path) -> None:
    plan = plan_for(tmp_path, ["faithfulness", "context_relevance"])
    with pytest.raises(ConfigError) as raised:
        build_components(plan, Bindings(judge=NoRelevance()))
    message = str(raised.value)
    assert "metric context_relevance" in message and "rate relevance" in message
    assert "judge no-relevance cannot" in message and "-m context_relevance" in message
    # The same through run_plan: nothing is run, the error comes before any sample.
    with pytest.raises(ConfigError, match="metric context_relevance"):
        run_plan(plan, Bindings(judge=as_judge(TwoMethods())))


def test_a_judge_without_relevance_runs_the_metrics_that_need_only_claims(
    tmp_path: Path,
) -> None:
    plan = plan_for(tmp_path, ["faithfulness"])
    report = run_plan(plan, Bindings(judge=NoRelevance())).report
    assert report.sample("p").scores["faithfulness"] == 1.0


async def test_the_matrix_of_a_judge_without_its_own_is_one_verification_per_context() -> None:
    rows = await judge_matrix(as_judge(TwoMethods()), [Claim("c1", "x")], ["a", "b"])
    assert [[v.context_index for v in row] for row in rows] == [[0, 1]]


BARE_PLUGIN = """
from vera import Claim, ClaimVerdict, Verdict
from vera.judges import Relevance, RelevanceVerdict


class Bare:
    async def extract_claims(self, response, *, query=None):
        return [Claim("c1", response)]

    async def verify_claims(self, claims, contexts):
        return [ClaimVerdict(c.id, Verdict.FULLY_SUPPORTED) for c in claims]


def make_judge(arg, settings):
    return Bare()
"""


@pytest.fixture
def bare_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed plugin whose judge factory returns a bare `ClaimJudge`."""
    entries = f"[vera.judges]\nbare = {PLUGIN_MODULE}:make_judge\n"
    monkeypatch.syspath_prepend(str(write_plugin(tmp_path / "site", BARE_PLUGIN, entries)))
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    importlib.invalidate_caches()
    JUDGE_REGISTRY.reset_plugins()
    yield
    sys.modules.pop(PLUGIN_MODULE, None)
    JUDGE_REGISTRY.reset_plugins()


@pytest.mark.usefixtures("bare_plugin")
def test_a_plugin_judge_with_only_the_two_methods_is_adapted_and_checked(tmp_path: Path) -> None:
    settings = vera.Settings(history=False, judge="bare")
    dataset = plan_for(tmp_path, ["faithfulness"]).dataset
    plan = build_plan(dataset=dataset, metrics=["faithfulness"], settings=settings)
    report = run_plan(plan).report
    assert report.judge == "Bare" and report.sample("p").scores["faithfulness"] == 1.0
    relevance = build_plan(dataset=dataset, metrics=["context_relevance"], settings=settings)
    with pytest.raises(ConfigError, match="metric context_relevance needs a judge that can rate"):
        build_components(relevance)


@pytest.mark.slow
def test_vera_eval_refuses_the_plan_with_exit_2_before_any_sample(tmp_path: Path) -> None:
    entries = f"[vera.judges]\nbare = {PLUGIN_MODULE}:make_judge\n"
    site = write_plugin(tmp_path / "site", BARE_PLUGIN, entries)
    result = run_vera(
        tmp_path, "eval", "-d", "example", "--judge", "bare", "-m", "context_relevance",
        "--history", "h.sqlite", PYTHONPATH=str(site),
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "metric context_relevance needs a judge that can rate relevance" in result.stderr
    assert not (tmp_path / "h.sqlite").exists()
