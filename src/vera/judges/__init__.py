"""Judges: what decides whether each claim is supported by the context."""

from vera._types import (
    Checklist,
    EntailmentMatrix,
    ItemVerdict,
    Relevance,
    RelevanceVerdict,
    RubricItem,
    RubricRequest,
)
from vera.judges._base import BaseJudge, Capability, Judge, JudgeDescription, JudgeWork
from vera.judges._cascade import CascadeJudge
from vera.judges._llm import LLMJudge
from vera.judges._modes import Mode
from vera.judges._nli import NLIJudge
from vera.judges._offline import OfflineJudge, UnsupportedLanguageError
from vera.judges._options import JudgeOptions
from vera.judges._registry import JUDGE_REGISTRY, create_judge

__all__ = [
    "JUDGE_REGISTRY",
    "BaseJudge",
    "Capability",
    "CascadeJudge",
    "Checklist",
    "EntailmentMatrix",
    "ItemVerdict",
    "Judge",
    "JudgeDescription",
    "JudgeOptions",
    "JudgeWork",
    "LLMJudge",
    "Mode",
    "NLIJudge",
    "OfflineJudge",
    "Relevance",
    "RelevanceVerdict",
    "RubricItem",
    "RubricRequest",
    "UnsupportedLanguageError",
    "create_judge",
]
