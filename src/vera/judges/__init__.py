"""Judges: what decides whether each claim is supported by the context."""

from vera.judges.base import Judge, judge_name, match_verdicts
from vera.judges.llm import LLMJudge
from vera.judges.offline import OfflineJudge
from vera.judges.registry import create_judge

__all__ = ["Judge", "LLMJudge", "OfflineJudge", "create_judge", "judge_name", "match_verdicts"]
