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
    judge_matrix,
    match_verdicts,
    relevance_rater,
)
from vera.judges._calls import RecordingChatModel, tokens
from vera.judges._cascade import CascadeJudge
from vera.judges._evidence import checked_verdict, quote_occurs
from vera.judges._fake import FakeJudge
from vera.judges._llm import LLMJudge, Mode
from vera.judges._nli import NLIJudge, label_map, windows
from vera.judges._offline import OfflineJudge, UnsupportedLanguageError
from vera.judges._options import JudgeOptions
from vera.judges._prompts import DATA_TAGS, load_prompt, neutralise_tags
from vera.judges._registry import JUDGE_REGISTRY, create_judge, create_managed_model, judge_names
from vera.judges._sentence_ids import SentenceIds
from vera.judges._voting import majority_verdicts

__all__ = [
    "DATA_TAGS",
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
    "checked_verdict",
    "create_judge",
    "create_managed_model",
    "judge_capabilities",
    "judge_matrix",
    "judge_names",
    "label_map",
    "load_prompt",
    "majority_verdicts",
    "match_verdicts",
    "neutralise_tags",
    "quote_occurs",
    "relevance_rater",
    "tokens",
    "windows",
]
