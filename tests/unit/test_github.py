"""vera.integrations.github without a server: its surface, the marker, the job from the
runner's variables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.actions_runner import evaluate

from vera import ConfigError
from vera.integrations._github import GitHubJob, comment_marker
from vera.integrations._github_comment import CommentLinks, read_report, render_comment

WHITEBOX = "the pull-request comment's own parts (marker, job, API calls)"


@pytest.mark.parametrize("name", ["", "two words", "x" * 65, "a-->b"])
def test_a_report_name_that_cannot_be_a_marker_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="report name"):
        comment_marker(name)


def test_the_event_payload_is_what_the_comment_reads(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 12}}))
    job = GitHubJob.from_env(
        {
            "GITHUB_REPOSITORY": "acme/rag",
            "GITHUB_EVENT_NAME": "pull_request_target",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_RUN_ID": "5",
        }
    )
    assert job.pull_request == 12
    assert job.run_url == "https://github.com/acme/rag/actions/runs/5"


def test_a_push_has_no_pull_request_to_comment_on() -> None:
    job = GitHubJob.from_env({"GITHUB_REPOSITORY": "acme/rag", "GITHUB_EVENT_NAME": "push"})
    assert job.pull_request is None
    assert job.run_url is None  # no run id: no link that leads nowhere


@pytest.mark.parametrize("repository", ["", "acme", "acme/", "/rag", "a/b/c"])
def test_a_repository_that_is_not_owner_name_is_refused(repository: str) -> None:
    with pytest.raises(ConfigError, match="expected OWNER/NAME"):
        GitHubJob.from_env({"GITHUB_REPOSITORY": repository, "GITHUB_EVENT_NAME": "push"})


def test_a_pull_request_event_without_a_number_is_refused(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {}}))
    env = {"GITHUB_REPOSITORY": "a/b", "GITHUB_EVENT_NAME": "pull_request"}
    with pytest.raises(ConfigError, match=r"has no pull_request\.number"):
        GitHubJob.from_env({**env, "GITHUB_EVENT_PATH": str(event)})


SNAPSHOTS = Path(__file__).parents[1] / "support" / "github"


def test_the_comment_matches_its_snapshot() -> None:
    # report.json: `vera eval` with the offline judge on four of the example's samples. A
    # change of the comment's layout shows here, so it is always deliberate: rewrite
    # comment.md with the new body once it reads right.
    report = read_report(SNAPSHOTS / "report.json")
    links = CommentLinks(
        run_url="https://github.com/acme/rag/actions/runs/4242",
        artifact_url="https://github.com/acme/rag/actions/runs/4242/artifacts/77",
    )
    body = render_comment(comment_marker("vera"), report, exit_code=1, links=links)
    assert body == (SNAPSHOTS / "comment.md").read_text(encoding="utf-8")


def test_a_run_that_wrote_no_report_says_where_to_look() -> None:
    links = CommentLinks(run_url="https://github.com/acme/rag/actions/runs/4242")
    body = render_comment(comment_marker("nightly"), None, exit_code=3, links=links)
    assert body == (
        "<!-- vera-eval:nightly -->\n"
        "### ⚠️ VERA · evaluation: the run is incomplete (exit 3)\n\n"
        "[Actions run](https://github.com/acme/rag/actions/runs/4242)\n\n"
        "vera eval wrote no report: the job's log says why.\n"
    )


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("always() && inputs.comment == 'true'", False),
        ("inputs.comment == 'FALSE'", True),  # the runner compares strings without case
        ("github.base_ref || github.ref_name", "main"),
        ("steps.eval.outputs.exit-code != ''", True),
        ("steps.missing.outputs.x != ''", False),
        ("!(inputs.comment == 'false') || success()", False),
        ("failure() && always()", True),
    ],
)
def test_the_step_runner_reads_expressions_as_the_runner_does(
    expression: str, expected: object
) -> None:
    # The action's test runs action.yml through this reader: a wrong reading would let a
    # step that the runner skips run there (or the reverse).
    contexts = {
        "inputs": {"comment": "false"},
        "github": {"base_ref": "", "ref_name": "main"},
        "steps": {"eval": {"outputs": {"exit-code": "1"}}},
    }
    assert evaluate(expression, contexts, ok=False) == expected
