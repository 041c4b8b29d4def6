"""VERA's pytest plugin and assertions, used the way a team's own test suite uses them: a test
file in a temporary folder, run by pytest in a subprocess with VERA installed."""

import re
import subprocess
import sys
from pathlib import Path

USER_SUITE = """
import pytest
from vera.testing import assert_faithful, assert_faithful_async, assert_no_hallucination

CONTEXTS = ["The refund window is 30 days.", "Refunds go to the original card."]

def test_supported_answer_passes(vera_judge):
    result = assert_faithful("Refunds go to the original card.", CONTEXTS, judge=vera_judge)
    assert result.passed and result.score >= 0.9

def test_contradicted_answer_fails(vera_judge):
    assert_faithful("The refund window is 60 days. Refunds go to the card.", CONTEXTS,
                    judge=vera_judge)

def test_contradicted_answer_fails_its_threshold_too(vera_judge):
    assert_faithful("The refund window is 60 days. Refunds go to the card.", CONTEXTS,
                    threshold=0.8, judge=vera_judge)

def test_hallucination_gate_fails():
    assert_no_hallucination("Refunds arrive by carrier pigeon.", CONTEXTS)

async def test_async_variant():
    await assert_faithful_async("The refund window is 30 days.", CONTEXTS)

def test_an_empty_answer_measures_nothing(vera_judge):
    assert_faithful("", CONTEXTS, judge=vera_judge)

def test_an_answer_without_claims_measures_nothing():
    assert_no_hallucination("Hello!", CONTEXTS)

def test_an_answer_without_claims_may_be_allowed():
    result = assert_faithful("Hello!", CONTEXTS, allow_no_claims=True)
    assert result.status == "no_claims"
"""


def test_a_user_suite_gets_the_fixture_and_readable_failures(tmp_path: Path) -> None:
    (tmp_path / "test_rag.py").write_text(USER_SUITE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
         "asyncio_mode=auto", "test_rag.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = done.stdout
    assert "5 failed, 3 passed" in out, out
    assert "the response is empty: there is nothing to measure" in out
    assert "hallucination_rate measured nothing: the judge found no claim" in out
    # The answer verdict decides: one of two claims contradicted fails it whatever the mean
    # (0.5), and the failure names the claim.
    contradicted = "1 of 2 claims is contradicted: 'The refund window is 60 days.'"
    assert f"unfaithful answer: {contradicted}" in out
    # A threshold adds the gate on the mean, said beside the verdict.
    below = re.search(r"faithfulness (\d\.\d{3}) is below 0\.80", out)
    assert below is not None and below.group(1) == "0.500", out
    assert "unsupported: 'The refund window is 60 days.' (CONTRADICTED)" in out
    # The failure is the assertion alone, not chained onto the sync edge's loop check.
    assert "no running event loop" not in out, out
    assert "During handling of the above exception" not in out, out
    assert "CONTRADICTED: 'The refund window is 60 days.'" in out
    assert "hallucination rate 1.000 is above 0.00" in out
    assert "NO_EVIDENCE: 'Refunds arrive by carrier pigeon.'" in out
