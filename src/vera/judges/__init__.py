"""Judges: what decides whether each claim is supported by the context."""

from vera.judges.base import BaseJudge, Judge, JudgeDescription, as_judge, match_verdicts
from vera.judges.llm import LLMJudge
from vera.judges.offline import OfflineJudge
from vera.judges.registry import JUDGE_REGISTRY, create_judge, judge_names

__all__ = [
    "JUDGE_REGISTRY",
    "BaseJudge",
    "Judge",
    "JudgeDescription",
    "LLMJudge",
    "OfflineJudge",
    "as_judge",
    "create_judge",
    "judge_names",
    "match_verdicts",
]
