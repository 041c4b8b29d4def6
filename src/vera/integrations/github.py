"""VERA in a GitHub Actions job: the pull-request comment and the step outputs that the
repository's `action.yml` writes (docs/github-action.md).

    from vera.integrations.github import post_comment
    outcome = post_comment(Path("vera-report.json"), name="vera", exit_code=1)

The token is read from `GITHUB_TOKEN` in the environment only; no message holds it.
"""

from vera.integrations._github import (
    CommentResult,
    GitHubApiError,
    GitHubJob,
    comment_marker,
    upsert_comment,
)
from vera.integrations._github_action import CommentOutcome, post_comment, write_step_outputs
from vera.integrations._github_comment import (
    BaseComparison,
    CommentLinks,
    compare_with_base,
    first_bad_claim,
    read_report,
    render_comment,
)

__all__ = [
    "BaseComparison",
    "CommentLinks",
    "CommentOutcome",
    "CommentResult",
    "GitHubApiError",
    "GitHubJob",
    "comment_marker",
    "compare_with_base",
    "first_bad_claim",
    "post_comment",
    "read_report",
    "render_comment",
    "upsert_comment",
    "write_step_outputs",
]
