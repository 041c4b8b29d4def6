"""`vera github comment` and `vera github outputs` against a fake of GitHub's REST API on
127.0.0.1 (tests/support/github_api.py), on reports `vera eval` wrote for the bundled example."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from tests.support.cli import run_vera
from tests.support.github_api import FakeGitHub

from vera.integrations._github import comment_marker
from vera.integrations._github_comment import first_bad_claim, read_report, render_comment

WHITEBOX = "the pull-request comment's own parts (marker, job, API calls)"

# Each test runs `vera` in subprocesses.
pytestmark = pytest.mark.slow

TOKEN = "ghs_" + secrets.token_hex(18)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A base run, then the same run gated with --regression against it, in one history."""
    folder = tmp_path_factory.mktemp("reports")
    for name, extra in (("base", ()), ("pr", ("--regression",))):
        done = run_vera(
            folder,
            *("eval", "-d", "example", "--history", "runs.sqlite", "-o", f"{name}.json"),
            *("--markdown", f"{name}.md", *extra),
        )
        assert done.returncode == 1, done.stderr  # the example has unfaithful answers
    return folder


def _event(folder: Path, number: int = 7) -> Path:
    path = folder / "event.json"
    path.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": number}}))
    return path


def _env(github: FakeGitHub, folder: Path, **more: str) -> dict[str, str]:
    return {
        "GITHUB_API_URL": github.url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": "acme/rag",
        "GITHUB_RUN_ID": "4242",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(_event(folder)),
        "GITHUB_TOKEN": TOKEN,
        **more,
    }


def _comment(folder: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    done = run_vera(folder, "github", "comment", "--report", "pr.json", *args, **env)
    printed = done.stdout + done.stderr
    assert TOKEN not in printed
    return done.returncode, printed


def test_one_comment_created_then_updated(reports: Path) -> None:
    report = read_report(reports / "pr.json")
    with FakeGitHub(token=TOKEN) as github:
        github.add_comment(7, "LGTM")
        env = _env(github, reports)
        code, printed = _comment(reports, env, "--summary", "pr.md", "--exit-code", "1")
        assert code == 0, printed
        assert "Comment created" in printed
        code, printed = _comment(reports, env, "--summary", "pr.md", "--exit-code", "1")
        assert code == 0, printed
        assert "Comment updated" in printed
        ours = [c for c in github.comments(7) if comment_marker("vera") in c["body"]]
        assert len(ours) == 1
        assert len(github.comments(7)) == 2  # the other comment left as it was
        assert [c.method for c in github.calls] == ["GET", "POST", "GET", "PATCH"]
        assert all(c.authorization == f"Bearer {TOKEN}" for c in github.calls)
    body = ours[0]["body"]
    assert body.startswith(comment_marker("vera"))
    assert "a gate failed (exit 1)" in body
    answers = report.answers
    assert answers is not None
    assert f"{answers.unfaithful} unfaithful" in body
    assert "https://github.example/acme/rag/actions/runs/4242" in body
    # Each unfaithful answer with its first unsupported claim, as the report has it.
    bad = next(s for s in report.samples if s.verdict and s.verdict.status == "unfaithful")
    first = next(c for c in bad.claims if c.verdict in ("NO_EVIDENCE", "CONTRADICTED"))
    verdict = first.verdict.value.replace("_", r"\_")  # escaped as Markdown
    assert f"`{bad.id}`: `{' '.join(first.text.split())}` ({verdict})" in body
    # vera eval's own summary, gate lines included, folded away.
    assert "<details><summary>vera eval's summary</summary>" in body
    assert "--max-unfaithful 0 allows 0" in body


def test_comment_against_the_base_run(reports: Path) -> None:
    pr = read_report(reports / "pr.json")
    assert pr.regression is not None and pr.regression.compared_with is not None
    with FakeGitHub(token=TOKEN) as github:
        code, printed = _comment(reports, _env(github, reports), "--exit-code", "1")
        assert code == 0, printed
        (comment,) = github.comments(7)
    body = comment["body"]
    assert f"| metric | base (`{pr.regression.compared_with}`) | this run |" in body
    mean = pr.metric_summary["faithfulness"].mean
    assert mean is not None
    # The same answers twice: no change, so no regression.
    assert f"| faithfulness | {mean:.3f} | {mean:.3f} | +0.000 |" in body
    assert "No significant drop against the base branch." in body
    assert f"compared with run {pr.regression.compared_with}" in body


def test_the_marker_is_found_on_a_later_page(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        for i in range(150):
            github.add_comment(7, f"comment {i}")
        ours = github.add_comment(7, f"{comment_marker('vera')}\nan older VERA comment")
        code, printed = _comment(reports, _env(github, reports), "--exit-code", "1")
        assert code == 0, printed
        gets = [c.path for c in github.calls if c.method == "GET"]
        patched = [c.path for c in github.calls if c.method == "PATCH"]
        assert len(gets) == 2 and "page=2" in gets[1]
        assert patched == [f"/repos/acme/rag/issues/comments/{ours}"]
        assert len(github.comments(7)) == 151


def test_a_comment_that_quotes_the_marker_is_not_ours(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        theirs = github.add_comment(7, f"> {comment_marker('vera')}\nwhy did this fail?")
        code, printed = _comment(reports, _env(github, reports), "--exit-code", "1")
        assert code == 0, printed
        comments = github.comments(7)
    assert len(comments) == 2 and comments[0]["id"] == theirs
    assert comments[0]["body"].startswith("> ")  # left as they wrote it
    assert comments[1]["body"].startswith(comment_marker("vera"))


def test_the_token_never_follows_a_page_link_to_another_host(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        for i in range(101):
            github.add_comment(7, f"comment {i}")
        github.link_pages_to("collector.example:8080")
        code, printed = _comment(reports, _env(github, reports), "--exit-code", "1")
        assert len(github.calls) == 1
    assert code == 2
    assert "the next page is on another host (http://collector.example:8080/" in printed


def test_each_report_name_has_its_own_comment(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        env = _env(github, reports)
        for name in ("offline", "gpt", "offline"):
            code, printed = _comment(reports, env, "--exit-code", "1", "--name", name)
            assert code == 0, printed
        bodies = [c["body"] for c in github.comments(7)]
    assert len(bodies) == 2
    assert bodies[0].startswith("<!-- vera-eval:offline -->")
    assert bodies[1].startswith("<!-- vera-eval:gpt -->")


def test_a_push_posts_nothing_and_says_so(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        env = _env(github, reports, GITHUB_EVENT_NAME="push")
        code, printed = _comment(reports, env, "--exit-code", "1")
        assert github.calls == []
    assert code == 0
    assert "not a pull request (event push): no comment" in printed


@pytest.mark.parametrize("status", [401, 403, 500])
def test_api_refusals_are_exit_2_and_never_show_the_token(reports: Path, status: int) -> None:
    with FakeGitHub(token=TOKEN) as github:
        # The fake echoes the Authorization header in its error message.
        github.fail_with(status)
        code, printed = _comment(reports, _env(github, reports), "--exit-code", "1")
    assert code == 2
    assert f"/repos/acme/rag/issues/7/comments?per_page=100 answered {status}" in printed
    assert "refused Bearer" in printed  # GitHub's message is kept, the token masked
    if status == 403:
        assert "pull-requests: write" in printed


def test_a_wrong_token_is_refused(reports: Path) -> None:
    with FakeGitHub(token="ghs_the_right_one_0123456789") as github:
        code, printed = _comment(reports, _env(github, reports), "--exit-code", "1")
    assert code == 2
    assert "answered 401: Bad credentials; the token is missing, expired or wrong" in printed


def test_an_unreachable_api_is_exit_2(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        url = github.url
    env = _env(github, reports, GITHUB_API_URL=url)
    code, printed = _comment(reports, env, "--exit-code", "1")
    assert code == 2
    assert "could not reach GitHub's API" in printed


def test_no_report_after_a_failed_run_is_said(reports: Path) -> None:
    with FakeGitHub(token=TOKEN) as github:
        env = _env(github, reports)
        done = run_vera(
            reports, "github", "comment", "--report", "missing.json", "--exit-code", "2", **env
        )
        assert done.returncode == 0, done.stderr
        (comment,) = github.comments(7)
    assert "bad usage or input, nothing evaluated (exit 2)" in comment["body"]
    assert "vera eval wrote no report" in comment["body"]


def test_outputs_and_job_summary(reports: Path) -> None:
    report = read_report(reports / "pr.json")
    output, summary = reports / "github_output", reports / "step_summary"
    done = run_vera(
        reports,
        *("github", "outputs", "--report", "pr.json", "--summary", "pr.md", "--exit-code", "1"),
        GITHUB_OUTPUT=str(output),
        GITHUB_STEP_SUMMARY=str(summary),
    )
    assert done.returncode == 0, done.stderr
    found = dict(line.split("=", 1) for line in output.read_text().splitlines())
    answers = report.answers
    assert answers is not None and report.regression is not None
    assert found == {
        "exit-code": "1",
        "report-path": "pr.json",
        "scored": str(report.counts.scored),
        "total": str(report.counts.total),
        "faithful": str(answers.faithful),
        "unfaithful": str(answers.unfaithful),
        "no-claims": str(answers.no_claims),
        "errors": str(report.counts.errors),
        "compared-with": str(report.regression.compared_with),
    }
    assert summary.read_text() == (reports / "pr.md").read_text().rstrip("\n") + "\n"


def test_outputs_outside_a_runner_is_exit_2(reports: Path) -> None:
    done = run_vera(reports, "github", "outputs", "--report", "pr.json", "--exit-code", "0")
    assert done.returncode == 2
    assert "GITHUB_OUTPUT is not set" in done.stderr


def test_without_an_exit_code_the_comment_claims_no_verdict(reports: Path) -> None:
    report = read_report(reports / "pr.json")
    body = render_comment(comment_marker("vera"), report, exit_code=None)
    heading = body.splitlines()[1]
    assert heading == "### VERA · example"
    for verdict in ("every gate holds", "a gate failed", "✅"):
        assert verdict not in body.split("<details>")[0]


def test_data_in_the_comment_is_inert(reports: Path) -> None:
    report = read_report(reports / "pr.json")
    bad = next(s for s in report.samples if first_bad_claim(s) is not None)
    claims = [
        c.model_copy(update={"text": "`` [click](https://evil.example) <img src=x> ``"})
        for c in bad.claims
    ]
    hostile = bad.model_copy(update={"id": "<b>x</b> *id*", "claims": tuple(claims)})
    samples = tuple(hostile if s.id == bad.id else s for s in report.samples)
    body = render_comment(
        comment_marker("vera"), report.model_copy(update={"samples": samples}), exit_code=1
    )
    assert "<b>x</b>" not in body.replace("`<b>x</b> *id*`", "")
    # A code span one backtick longer than the longest run inside: nothing in it renders.
    assert "``` `` [click](https://evil.example) <img src=x> `` ```" in body


def test_an_unreadable_report_still_gives_the_exit_code(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{not json")
    output = tmp_path / "github_output"
    done = run_vera(
        tmp_path,
        *("github", "outputs", "--report", "report.json", "--exit-code", "3"),
        GITHUB_OUTPUT=str(output),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary"),
    )
    assert done.returncode == 2
    assert "--report report.json: not a VERA JSON report" in done.stderr
    assert output.read_text() == "exit-code=3\nreport-path=report.json\n"
