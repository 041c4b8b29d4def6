"""VERA's data types: samples, claims, verdicts, metric results and reports; the bottom layer.

Every type here is a frozen pydantic model, so a value can be shared between concurrent tasks
and metrics without copies. This package imports nothing else of VERA (an import contract in
pyproject.toml checks it), so any layer can use these types: judges write verdicts, metrics
read them, the runner fills a `Report` and renderers read it. VERA's exception tree is here
too, in `vera.types.errors` (imported as `vera.errors`), because `Verdict.parse` raises it.
"""

from vera.types.claims import (
    DEFAULT_MIN_ENTAILMENT,
    Claim,
    ClaimVerdict,
    Relevance,
    RelevanceVerdict,
    Verdict,
)
from vera.types.conversations import (
    Conversation,
    Role,
    SourceKind,
    ToolCall,
    ToolResult,
    Turn,
)
from vera.types.report import (
    ClaimRecord,
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
from vera.types.results import (
    CitationCheck,
    ClaimAnalysis,
    MetricResult,
    MetricStatus,
    Need,
)
from vera.types.samples import Citation, Context, Sample

__all__ = [
    "DEFAULT_MIN_ENTAILMENT",
    "Citation",
    "CitationCheck",
    "Claim",
    "ClaimAnalysis",
    "ClaimRecord",
    "ClaimVerdict",
    "Context",
    "Conversation",
    "Estimate",
    "GroupStats",
    "InvalidRow",
    "LatencySummary",
    "MetricResult",
    "MetricStatus",
    "MetricSummary",
    "Need",
    "Relevance",
    "RelevanceVerdict",
    "Report",
    "Role",
    "RunStop",
    "Sample",
    "SampleResult",
    "SampleStatus",
    "SourceKind",
    "StepRecord",
    "ToolCall",
    "ToolResult",
    "Turn",
    "Verdict",
]
