"""VERA's data types: samples, claims, verdicts, metric results and reports; the bottom layer.

Every type here is a frozen pydantic model, so a value can be shared between concurrent tasks
and metrics without copies. This package imports nothing else of VERA (an import contract in
pyproject.toml checks it), so any layer can use these types: judges write verdicts, metrics
read them, the runner fills a `Report` and renderers read it. VERA's exception tree is here
too, in `vera._types._errors` (exported here and by `vera`), because `Verdict.parse` raises it.
"""

from vera._types._answers import AnswerStatus, AnswerVerdict, AnswerVerdicts, PartialRule
from vera._types._baselines import BaselineComparison, MetricComparison
from vera._types._claims import (
    DEFAULT_MIN_ENTAILMENT,
    Claim,
    ClaimVerdict,
    Relevance,
    RelevanceVerdict,
    Verdict,
)
from vera._types._conversations import (
    Conversation,
    Role,
    SourceKind,
    ToolCall,
    ToolResult,
    Turn,
)
from vera._types._entailment import EntailmentMatrix
from vera._types._errors import (
    ConfigError,
    DatasetError,
    DatasetRowError,
    JudgeError,
    JudgeResponseError,
    RunStopError,
    VeraError,
)
from vera._types._extras import install_hint
from vera._types._fingerprint import (
    MeasuredPlan,
    RegressionCheck,
    RunFingerprint,
    describe_differences,
)
from vera._types._judge_details import DrawAgreement, EvidenceCount, JudgeDetails, QuoteCheck
from vera._types._report import (
    Calibration,
    ClaimRecord,
    CorrectedEstimate,
    Estimate,
    GroupStats,
    InvalidRow,
    LatencySummary,
    MetricSummary,
    Report,
    RunStop,
    SampleResult,
    SampleStatus,
    StepRecord,
)
from vera._types._results import (
    CitationCheck,
    ClaimAnalysis,
    MetricResult,
    MetricStatus,
    Need,
)
from vera._types._rubric import (
    Checklist,
    ItemVerdict,
    RubricAnswers,
    RubricItem,
    RubricRequest,
    RubricVerdict,
)
from vera._types._samples import Citation, Context, Sample
from vera._types._secrets import is_redacted, mask_secret, redact
from vera._types._turns import (
    ConversationGroup,
    ConversationSummary,
    ConversationTurns,
    InconsistentClaim,
    TurnRef,
)

__all__ = [
    "DEFAULT_MIN_ENTAILMENT",
    "AnswerStatus",
    "AnswerVerdict",
    "AnswerVerdicts",
    "BaselineComparison",
    "Calibration",
    "Checklist",
    "Citation",
    "CitationCheck",
    "Claim",
    "ClaimAnalysis",
    "ClaimRecord",
    "ClaimVerdict",
    "ConfigError",
    "Context",
    "Conversation",
    "ConversationGroup",
    "ConversationSummary",
    "ConversationTurns",
    "CorrectedEstimate",
    "DatasetError",
    "DatasetRowError",
    "DrawAgreement",
    "EntailmentMatrix",
    "Estimate",
    "EvidenceCount",
    "GroupStats",
    "InconsistentClaim",
    "InvalidRow",
    "ItemVerdict",
    "JudgeDetails",
    "JudgeError",
    "JudgeResponseError",
    "LatencySummary",
    "MeasuredPlan",
    "MetricComparison",
    "MetricResult",
    "MetricStatus",
    "MetricSummary",
    "Need",
    "PartialRule",
    "QuoteCheck",
    "RegressionCheck",
    "Relevance",
    "RelevanceVerdict",
    "Report",
    "Role",
    "RubricAnswers",
    "RubricItem",
    "RubricRequest",
    "RubricVerdict",
    "RunFingerprint",
    "RunStop",
    "RunStopError",
    "Sample",
    "SampleResult",
    "SampleStatus",
    "SourceKind",
    "StepRecord",
    "ToolCall",
    "ToolResult",
    "Turn",
    "TurnRef",
    "VeraError",
    "Verdict",
    "describe_differences",
    "install_hint",
    "is_redacted",
    "mask_secret",
    "redact",
]
