"""The two things VERA's GitHub Action (`action.yml`) asks of VERA after `vera eval`: the step's
outputs and job summary, and the one pull-request comment. `vera github outputs` and
`vera github comment` call these; a workflow's own Python may too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vera._run import ExitCode
from vera._types import Report
from vera._types._errors import ConfigError
from vera.integrations._github import CommentResult, GitHubJob, comment_marker, upsert_comment
from vera.integrations._github_comment import (
    CommentLinks,
    compare_with_base,
    read_report,
    render_comment,
    step_outputs,
)


def _report_or_none(path: Path, exit_code: int | None) -> Report | None:
    """The report; None where vera eval stopped before writing one (exit 2 or 3), which the
    comment and the outputs then say. A missing report after a finished run is an error."""
    if path.exists() or exit_code in (None, ExitCode.OK, ExitCode.GATE_FAILED):
        return read_report(path)
    return None


def _env_file(env: Mapping[str, str], name: str) -> Path:
    value = env.get(name)
    if not value:
        raise ConfigError(f"{name} is not set: the Actions runner sets it for each step")
    return Path(value)


def write_step_outputs(
    report_path: Path,
    *,
    exit_code: int,
    summary_path: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Append the outputs (exit code, answer verdict counts, report path, the run compared
    with) to `GITHUB_OUTPUT` and the Markdown summary to `GITHUB_STEP_SUMMARY`; the outputs."""
    env = os.environ if env is None else env
    if "\n" in str(report_path):
        raise ConfigError(f"--report {report_path!s}: a path with a line break cannot be an output")
    output = _env_file(env, "GITHUB_OUTPUT")
    outputs = step_outputs(None, exit_code=exit_code, report_path=report_path)
    # The exit code first: the later steps (upload, comment, the job's verdict) read it even
    # when the report cannot be read.
    with output.open("a", encoding="utf-8") as file:
        file.writelines(f"{key}={value}\n" for key, value in outputs.items())
    report = _report_or_none(report_path, exit_code)
    counts = step_outputs(report, exit_code=exit_code, report_path=report_path)
    with output.open("a", encoding="utf-8") as file:
        file.writelines(f"{k}={v}\n" for k, v in counts.items() if k not in outputs)
    if summary_path is not None and summary_path.exists():
        summary = summary_path.read_text(encoding="utf-8")
    else:
        summary = f"### VERA\n\nvera eval exited {exit_code} and wrote no summary: see the log.\n"
    with _env_file(env, "GITHUB_STEP_SUMMARY").open("a", encoding="utf-8") as file:
        file.write(summary.rstrip("\n") + "\n")
    return counts


@dataclass(frozen=True)
class CommentOutcome:
    """What `post_comment` did: the comment (None outside a pull request) and why not."""

    comment: CommentResult | None
    body: str | None
    skipped: str | None = None


def post_comment(
    report_path: Path,
    *,
    name: str = "vera",
    exit_code: int | None = None,
    summary_path: Path | None = None,
    history: Path | None = None,
    artifact_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> CommentOutcome:
    """Create or update the pull request's one comment of report `name` from the JSON report
    (and vera eval's Markdown summary, folded away). Outside a pull request (a push) nothing
    is posted and `skipped` says why. The token is `GITHUB_TOKEN` in `env`, never an argument,
    so it cannot land in a shell history or a process list. Raises `GitHubApiError`."""
    env = os.environ if env is None else env
    marker = comment_marker(name)
    job = GitHubJob.from_env(env)
    if job.pull_request is None:
        event = job.event_name or "unknown"
        return CommentOutcome(None, None, f"not a pull request (event {event}): no comment")
    report = _report_or_none(report_path, exit_code)
    summary = None
    if summary_path is not None and summary_path.exists():
        summary = summary_path.read_text(encoding="utf-8")
    body = render_comment(
        marker,
        report,
        exit_code=exit_code,
        base=compare_with_base(report, history) if report is not None else None,
        summary=summary,
        links=CommentLinks(run_url=job.run_url, artifact_url=artifact_url or None),
    )
    token = env.get("GITHUB_TOKEN", "")
    return CommentOutcome(upsert_comment(job, job.pull_request, marker, body, token), body)
