"""action.yml's steps run as the Actions runner runs them (tests/support/actions_runner.py), on
the bundled example with the offline judge: a push to the base branch saves the run history,
a pull request restores it, gates with --regression against it and keeps one comment on a fake
of GitHub's REST API (tests/support/github_api.py).

The `uses:` steps are not run: fakes play the Actions cache (a dict of saved histories, keyed
as the cache keys them) and the artifact store, and pip is a stand-in that records what the
action installs; `vera` is the real command, from this checkout.
"""

from __future__ import annotations

import secrets
import shutil
import sys
from pathlib import Path

import pytest
from tests.support.actions_runner import CompositeAction, Job, shell_path
from tests.support.github_api import FakeGitHub

from vera.integrations._github import comment_marker
from vera.integrations._github_comment import read_report

WHITEBOX = "the pull-request comment's own parts (marker, job, API calls)"

# Each test runs the action's steps, `vera` among them, in subprocesses.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghs_" + secrets.token_hex(18)
USES = [
    "actions/setup-python@v5",
    "actions/cache/restore@v4",
    "actions/upload-artifact@v4",
    "actions/cache/save@v4",
]


class FakeCache:
    """The Actions cache: `save` keeps a copy of the path under its key, `restore` the newest
    whose key starts with a restore key (an exact key first), as actions/cache does."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.saved = folder, {}  # type: ignore[var-annotated]

    def save(self, with_: dict[str, str]) -> dict[str, str]:
        stored = self.folder / f"{len(self.saved)}.sqlite"
        shutil.copy(with_["path"], stored)
        self.saved[with_["key"]] = stored
        return {}

    def restore(self, with_: dict[str, str], workspace: Path) -> dict[str, str]:
        keys = [with_["key"], *with_.get("restore-keys", "").split()]
        for key in keys:
            found = [k for k in self.saved if k == key or k.startswith(key)]
            if found:
                target = workspace / with_["path"]
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(self.saved[found[-1]], target)
                return {
                    "cache-hit": str(found[-1] == with_["key"]).lower(),
                    "cache-matched-key": found[-1],
                }
        return {"cache-hit": "false"}


def _shims(folder: Path) -> Path:
    """`pip` that records what it was asked to install; `vera` this test's own interpreter's."""
    folder.mkdir()
    (folder / "pip").write_text(f'#!/bin/sh\necho "$@" >> "{folder}/pip.log"\n')
    (folder / "vera").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vera "$@"\n')
    for shim in ("pip", "vera"):
        (folder / shim).chmod(0o755)
    return folder


def _run(
    workspace: Path, cache: FakeCache, github_api: FakeGitHub, event: str, **inputs: str
) -> Job:
    pull = event == "pull_request"
    runner = CompositeAction(
        ROOT / "action.yml",
        workspace=workspace,
        github={
            "api_url": github_api.url,
            "server_url": "https://github.example",
            "repository": "acme/rag",
            "run_id": "9001",
            "run_attempt": "1",
            "event_name": event,
            "base_ref": "main" if pull else "",
            "ref_name": "7/merge" if pull else "main",
            "token": TOKEN,
        },
        env={
            "PATH": shell_path(workspace.parent / "shims"),
            "PYTHONPATH": str(ROOT / "src"),
            "HOME": str(workspace),
            "NO_COLOR": "1",
            "COLUMNS": "200",
        },
        event={"pull_request": {"number": 7}} if pull else {"ref": "refs/heads/main"},
        fakes={
            "actions/cache/restore": lambda w: cache.restore(w, workspace),
            "actions/cache/save": lambda w: cache.save({**w, "path": str(workspace / w["path"])}),
            "actions/upload-artifact": lambda w: {"artifact-url": "https://github.example/art/1"},
        },
    )
    job = runner.run({"dataset": "example", "extras": "openai", **inputs})
    for step in job.steps:
        assert TOKEN not in step.stdout + step.stderr, step.name
    return job


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FakeCache, Job]:
    """A push to main: the run history saved to the cache for the pull requests against it."""
    root = tmp_path_factory.mktemp("action")
    _shims(root / "shims")
    (root / "main").mkdir()
    cache = FakeCache(root)
    with FakeGitHub(token=TOKEN) as github_api:
        job = _run(root / "main", cache, github_api, "push", **{"max-unfaithful": "50%"})
        assert github_api.calls == []
    return root, cache, job


def test_every_uses_step_is_there_and_pip_installs_this_checkout(
    base: tuple[Path, FakeCache, Job],
) -> None:
    root, _, job = base
    assert [s.uses for s in job.steps if s.uses] == USES
    setup = job.step("Set up Python")
    assert setup.kind == "uses" and setup.with_ == {"python-version": "3.11"}
    assert (root / "shims" / "pip.log").read_text().split()[-1] == f"{ROOT}[openai]"


def test_a_push_saves_the_history_and_posts_no_comment(base: tuple[Path, FakeCache, Job]) -> None:
    root, cache, job = base
    restore = job.step("Restore the base branch's run history")
    assert restore.with_["restore-keys"] == "vera-history-vera-main-"
    assert restore.outputs == {"cache-hit": "false"}  # the first run: nothing saved yet
    assert (
        "not a pull request (event push): no comment"
        in job.step("Comment on the pull request").stdout
    )
    saved = job.step("Save the run history for pull requests against this branch")
    assert saved.kind == "uses"
    assert list(cache.saved) == ["vera-history-vera-main-9001-1"]
    assert job.outputs["exit-code"] == "0" and not job.failed
    report = read_report(root / "main" / "vera-report" / "report.json")
    assert report.regression is None  # no history was restored: no --regression
    assert job.outputs["unfaithful"] == str(report.answers.unfaithful if report.answers else "")
    assert job.summary.startswith("### VERA · example")
    upload = job.step("Upload the report")
    assert upload.with_["path"] == "vera-report" and upload.with_["name"] == "vera-report"
    assert {p.name for p in (root / "main" / "vera-report").iterdir()} == {
        "report.json",
        "report.html",
        "summary.md",
        "junit.xml",
    }


def test_a_pull_request_gates_against_main_and_keeps_one_comment(
    base: tuple[Path, FakeCache, Job],
) -> None:
    root, cache, _ = base
    workspace = root / "pr"
    workspace.mkdir()
    with FakeGitHub(token=TOKEN) as github_api:
        # The judge named here is the one the push left to vera.toml's default: the same plan.
        first = _run(workspace, cache, github_api, "pull_request", judge="offline")
        again = _run(workspace, cache, github_api, "pull_request", judge="offline")
        comments = github_api.comments(7)
    report = read_report(workspace / "vera-report" / "report.json")
    assert report.regression is not None and report.regression.compared_with
    for job in (first, again):
        restored = job.step("Restore the base branch's run history").outputs
        assert restored["cache-matched-key"] == "vera-history-vera-main-9001-1"
        # The example has unfaithful answers and max-unfaithful defaults to 0: exit 1, after
        # the summary, the upload and the comment.
        assert job.outputs["exit-code"] == "1"
        assert job.steps[-1].returncode == 1 and job.failed
        assert [s.kind for s in job.steps[-4:-1]] == ["uses", "run", "skipped"]  # no cache save
        assert "Regression: compared with run" in job.summary
    assert again.outputs["compared-with"] == report.regression.compared_with
    (comment,) = comments
    body = comment["body"]
    assert body.startswith(comment_marker("vera"))
    assert "a gate failed (exit 1)" in body
    assert "[HTML report](https://github.example/art/1)" in body
    assert f"| metric | base (`{report.regression.compared_with}`) | this run |" in body
    assert "Comment created" in first.step("Comment on the pull request").stdout
    assert "Comment updated" in again.step("Comment on the pull request").stdout


def test_fail_on_error_reports_a_failed_gate_without_failing(
    base: tuple[Path, FakeCache, Job],
) -> None:
    root, cache, _ = base
    workspace = root / "lenient"
    workspace.mkdir()
    with FakeGitHub(token=TOKEN) as github_api:
        job = _run(
            workspace, cache, github_api, "pull_request", **{"fail-on": "error", "comment": "false"}
        )
        assert github_api.calls == []
    assert job.outputs["exit-code"] == "1"
    assert job.step("Comment on the pull request").kind == "skipped"
    assert job.steps[-1].returncode == 0 and not job.failed
    assert "not failing the job (fail-on: error)" in job.steps[-1].stdout


def test_a_bad_input_is_exit_2_before_anything_runs(base: tuple[Path, FakeCache, Job]) -> None:
    root, cache, _ = base
    workspace = root / "bad"
    workspace.mkdir()
    with FakeGitHub(token=TOKEN) as github_api:
        job = _run(workspace, cache, github_api, "pull_request", **{"fail-on": "sometimes"})
        assert github_api.calls == []
    assert job.step("Evaluate").returncode == 2
    assert "fail-on is 'sometimes': use gate, error or never" in job.step("Evaluate").stdout
    assert job.step("Upload the report").kind == "skipped"
    assert job.steps[-1].returncode == 2
    assert not (workspace / "vera-report").exists()
