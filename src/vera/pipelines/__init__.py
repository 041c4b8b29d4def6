"""End-to-end RAG pipelines: steps composed with `then`, run per query, timed per step."""

from vera.pipelines._core import Pipeline, RagState, identity
from vera.pipelines._laws import check_laws
from vera.pipelines._user import UserPipelineError

__all__ = [
    "Pipeline",
    "RagState",
    "UserPipelineError",
    "check_laws",
    "identity",
]
