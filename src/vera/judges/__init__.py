"""Judges: what decides whether each claim is supported by the context."""

from vera.judges.base import Judge, judge_name, match_verdicts
from vera.judges.offline import OfflineJudge
from vera.judges.registry import JUDGES, create_judge

__all__ = ["JUDGES", "Judge", "OfflineJudge", "create_judge", "judge_name", "match_verdicts"]
