"""Judges: what decides whether each claim is supported by the context."""

from vera._types import (
    Checklist,
    EntailmentMatrix,
    ItemVerdict,
    JudgeDetails,
    QuoteCheck,
    Relevance,
    RelevanceVerdict,
    RubricAnswers,
    RubricItem,
    RubricRequest,
    RubricVerdict,
)
from vera.judges._base import (
    BaseJudge,
    CallPlanner,
    Capability,
    ClaimJudge,
    Judge,
    JudgeDescription,
    JudgeWork,
    MatrixVerifier,
    RelevanceRater,
    as_judge,
    judge_capabilities,
    match_verdicts,
)
from vera.judges._calls import RecordingChatModel, tokens
from vera.judges._cascade import CascadeJudge
from vera.judges._fake import FakeJudge
from vera.judges._llm import LLMJudge
from vera.judges._modes import Mode
from vera.judges._nli import NLIJudge, windows
from vera.judges._offline import OfflineJudge, UnsupportedLanguageError
from vera.judges._options import JudgeOptions
from vera.judges._registry import JUDGE_REGISTRY, create_judge, judge_names
from vera.judges._sentence_ids import SentenceIds

__all__ = [
    "JUDGE_REGISTRY",
    "BaseJudge",
    "CallPlanner",
    "Capability",
    "CascadeJudge",
    "Checklist",
    "ClaimJudge",
    "EntailmentMatrix",
    "FakeJudge",
    "ItemVerdict",
    "Judge",
    "JudgeDescription",
    "JudgeDetails",
    "JudgeOptions",
    "JudgeWork",
    "LLMJudge",
    "MatrixVerifier",
    "Mode",
    "NLIJudge",
    "OfflineJudge",
    "QuoteCheck",
    "RecordingChatModel",
    "Relevance",
    "RelevanceRater",
    "RelevanceVerdict",
    "RubricAnswers",
    "RubricItem",
    "RubricRequest",
    "RubricVerdict",
    "SentenceIds",
    "UnsupportedLanguageError",
    "as_judge",
    "create_judge",
    "judge_capabilities",
    "judge_names",
    "match_verdicts",
    "tokens",
    "windows",
]
