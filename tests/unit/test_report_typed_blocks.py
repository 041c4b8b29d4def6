"""The report's blocks that were plain dicts are typed models, written as they always were:
`baseline_comparison` reads and writes seed 001's flat block, `calibration.claims` and
`judge_details` keep their keys and order."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from vera._types import BaselineComparison, JudgeDetails, MetricComparison, QuoteCheck

WHITEBOX = "the report's parts and the secret guards"

PAIRED = {
    "system_mean": 0.75,
    "baseline_mean": 0.5,
    "difference": 0.25,
    "ci_low": 0.1,
    "ci_high": 0.4,
    "p_value": 0.01,
    "paired_samples": 4,
    "improvement": "+50.0%",
}
BLOCK = {
    "naive_rag": {"faithfulness": 0.5},
    "improvement_over_baseline": {"naive_rag": {"faithfulness": "+50.0%"}},
    "significance": {"naive_rag": {"faithfulness": PAIRED}},
}


def test_the_flat_block_is_read_into_parts_and_written_back_unchanged() -> None:
    block = BaselineComparison.model_validate(BLOCK)
    assert block.means == {"naive_rag": {"faithfulness": 0.5}}
    assert block.comparison("naive_rag", "faithfulness") == MetricComparison(**PAIRED)
    assert block.comparison("naive_rag", "recall") is None
    assert json.dumps(block.model_dump(mode="json")) == json.dumps(BLOCK)
    assert block["significance"] == {"naive_rag": {"faithfulness": PAIRED}}  # read as a dict
    assert BaselineComparison.model_validate_json(block.model_dump_json()) == block


def test_a_block_written_before_significance_was_stored_reads_without_it() -> None:
    old = BaselineComparison.model_validate({"naive_rag": {"faithfulness": 0.5}})
    assert old.significance == {} and old.comparison("naive_rag", "faithfulness") is None


def test_a_block_of_another_shape_is_refused_saying_what_it_holds() -> None:
    with pytest.raises(ValidationError, match="each an object"):
        BaselineComparison.model_validate({"naive_rag": 0.5})


# A cascade's details as its judge and the run write them: the judge's own parts, its extra
# keys (the second judge's details under its spec), its usage, then the run's checks.
CASCADE = {
    "prompt_versions": {"verify_claims": "verify_claims/2"},
    "first": "offline:learned",
    "second": "openai:gpt-4o-mini",
    "share_sent": None,
    "calls_saved": 3,
    "openai:gpt-4o-mini": {"mode": "claims", "usage": {"calls": 2}},
    "usage": {"calls": 2, "cached_calls": 0, "by_label": {}},
    "agreement": {"claims": 4, "mean": 0.75, "unanimous": 0.5},
    "quotes_not_found": {"supported": 1, "claims": 3},
    "untraceable_claims": {"untraceable": 0, "claims": 5},
}


def test_judge_details_keep_their_parts_order_and_extra_keys() -> None:
    details = JudgeDetails.model_validate(CASCADE)
    assert details.quotes_not_found == QuoteCheck(supported=1, claims=3)
    assert details.agreement is not None and details.agreement.unanimous == 0.5
    assert details.mode is None and "mode" not in details
    assert json.dumps(details.model_dump(mode="json")) == json.dumps(CASCADE)
    # Read as the dict it was: plain values, absent parts absent.
    assert details["quotes_not_found"] == {"supported": 1, "claims": 3}
    assert details.get("calls_saved") == 3 and details.get("mode", "none") == "none"
    assert [key for key, _ in details.items()] == list(CASCADE) == list({**details})
    assert JudgeDetails().model_dump() == {}


def test_judge_details_of_a_known_part_in_another_shape_are_refused() -> None:
    with pytest.raises(ValidationError, match="quotes_not_found"):
        JudgeDetails.model_validate({"quotes_not_found": {"supported": "some"}})
