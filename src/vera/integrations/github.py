"""VERA in a GitHub Actions job: the pull-request comment and the step outputs that the
repository's `action.yml` writes (docs/github-action.md).

    from vera.integrations.github import post_comment
    outcome = post_comment(Path("vera-report.json"), name="vera", exit_code=1)

The token is read from `GITHUB_TOKEN` in the environment only; no message holds it.
"""

from vera.integrations._github import GitHubApiError
from vera.integrations._github_action import post_comment, write_step_outputs

__all__ = [
    "GitHubApiError",
    "post_comment",
    "write_step_outputs",
]
