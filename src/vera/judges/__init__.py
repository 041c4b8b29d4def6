"""Judges: what decides whether each claim is supported by the context."""

from vera.judges.base import (
    BaseJudge,
    CallPlanner,
    Capability,
    ClaimJudge,
    Judge,
    JudgeDescription,
    MatrixVerifier,
    RelevanceRater,
    as_judge,
    judge_capabilities,
    match_verdicts,
)
from vera.judges.llm import LLMJudge
from vera.judges.offline import OfflineJudge
from vera.judges.registry import JUDGE_REGISTRY, create_judge, judge_names

__all__ = [
    "JUDGE_REGISTRY",
    "BaseJudge",
    "CallPlanner",
    "Capability",
    "ClaimJudge",
    "Judge",
    "JudgeDescription",
    "LLMJudge",
    "MatrixVerifier",
    "OfflineJudge",
    "RelevanceRater",
    "as_judge",
    "create_judge",
    "judge_capabilities",
    "judge_names",
    "match_verdicts",
]
