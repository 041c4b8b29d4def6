"""The report's blocks that were plain dicts are typed models, written as they always were:
`baseline_comparison` reads and writes seed 001's flat block."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from vera.types import BaselineComparison, MetricComparison

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
    assert BaselineComparison.model_validate_json(block.model_dump_json()) == block


def test_a_block_written_before_significance_was_stored_reads_without_it() -> None:
    old = BaselineComparison.model_validate({"naive_rag": {"faithfulness": 0.5}})
    assert old.significance == {} and old.comparison("naive_rag", "faithfulness") is None


def test_a_block_of_another_shape_is_refused_saying_what_it_holds() -> None:
    with pytest.raises(ValidationError, match="each an object"):
        BaselineComparison.model_validate({"naive_rag": 0.5})
