"""End-to-end RAG pipelines: steps composed with `then`, run per query, timed per step."""

from vera.pipelines._core import Pipeline, RagState, identity
from vera.pipelines._laws import check_laws
from vera.pipelines._user import UserPipelineError, as_pipeline, load_user_pipeline

__all__ = [
    "Pipeline",
    "RagState",
    "UserPipelineError",
    "as_pipeline",
    "check_laws",
    "identity",
    "load_user_pipeline",
]
