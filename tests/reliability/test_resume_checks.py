"""`--resume` checks what it resumes: the data must be the data the run started on, the
settings that change a result or the bill are the stored ones unless named again (and the
run says which it applies), and a history edited to send a key elsewhere sends none.

The runs are real (`vera eval` in a subprocess, the offline judge, or an OpenAI judge on the
loopback server); an interrupted run is a finished one whose last results were deleted and
whose status was set back to "running", as a kill leaves it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from tests.reliability.runs import write_dataset
from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer
from vera import Bindings, ConfigError, RunStore, Settings, run_plan
from vera._plan import DatasetRef, build_plan
from vera.datasets._inmemory import InMemoryDataset

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

SAMPLES = 6


KEYS = {"OPENAI_API_KEY": "sk-never-sent", "ANTHROPIC_API_KEY": "sk-ant-never-sent"}


def vera(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_vera(cwd, *args, timeout=120, **KEYS)


def interrupted(tmp_path: Path, keep: int = 2) -> str:
    """An offline run of d.jsonl in h.sqlite as a kill leaves it: `keep` samples stored."""
    write_dataset(tmp_path / "d.jsonl", SAMPLES)
    done = vera(tmp_path, "eval", "-d", "d.jsonl", "--history", "h.sqlite")
    assert done.returncode == 0, done.stderr
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db:
        [(run_id,)] = db.execute("SELECT id FROM runs").fetchall()
        db.execute("DELETE FROM results WHERE position >= ?", (keep,))
        db.execute("UPDATE runs SET status = 'running', report = NULL")
        db.commit()
    return str(run_id)


def test_a_dataset_edited_before_resume_is_refused_naming_the_file(tmp_path: Path) -> None:
    run_id = interrupted(tmp_path)
    rows = (tmp_path / "d.jsonl").read_text().splitlines()
    edited = json.loads(rows[4]) | {"response": "Something else entirely."}
    extra = json.loads(rows[5]) | {"id": "s99"}
    rows[4:] = [json.dumps(edited), rows[5], json.dumps(extra)]
    (tmp_path / "d.jsonl").write_text("\n".join(rows) + "\n")

    resumed = vera(tmp_path, "eval", "--resume", run_id, "--history", "h.sqlite", "-o", "r.json")
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    said = " ".join(resumed.stderr.split())
    assert f"run {run_id} cannot be resumed: its data d.jsonl has changed" in said
    assert "one report would mix the two datasets" in said
    assert not (tmp_path / "r.json").exists()
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (2,)


def test_an_unchanged_dataset_resumes_and_says_which_stored_settings_it_applies(
    tmp_path: Path,
) -> None:
    run_id = interrupted(tmp_path)
    resumed = vera(tmp_path, "eval", "--resume", run_id, "--history", "h.sqlite",
                   "--concurrency", "2", "-o", "r.json")  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    said = " ".join(resumed.stderr.split())
    assert f"Resuming run {run_id} with judge='offline', judge_base_url=none" in said
    assert "judge_samples=1, max_cost=none, concurrency=2, cache_path=none" in said
    assert "from the stored run; named again: concurrency=2" in said
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["total"] == SAMPLES and report["counts"]["scored"] == SAMPLES


def test_resuming_from_python_with_other_settings_names_each_unless_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = interrupted(tmp_path)
    stored = RunStore(tmp_path / "h.sqlite")
    plan = stored.plan(run_id)
    stored.close()
    other = plan.model_copy(
        update={"settings": plan.settings.merge({"concurrency": 2, "judge_samples": 3}, origin="t")}
    )
    monkeypatch.chdir(tmp_path)  # the stored plan names d.jsonl relative to the run's folder
    with pytest.raises(ConfigError) as refused:
        run_plan(other, Bindings(keep_samples=False), resume=run_id)
    message = str(refused.value)
    assert "judge_samples: stored 1, now 3" in message and "concurrency: stored 8, now 2" in message
    accepted = run_plan(
        other.model_copy(update={"settings": plan.settings.merge({"concurrency": 2}, origin="t")}),
        Bindings(keep_samples=False),
        resume=run_id,
        accept=("concurrency",),
    )
    assert accepted.exit_code == 0 and accepted.report.counts["scored"] == SAMPLES


def stored_openai_run(tmp_path: Path, loopback: LoopbackServer, edit: str) -> str:
    """A run with an OpenAI judge on the loopback server, interrupted before any sample, its
    stored options then edited with the SQL expression `edit` (of `options`)."""
    write_dataset(tmp_path / "d.jsonl", 2)
    settings = Settings(judge="openai:gpt-4o-mini", judge_base_url=loopback.openai_url)
    plan = build_plan(dataset=DatasetRef(source="d.jsonl"), settings=settings)
    store = RunStore(tmp_path / "h.sqlite")
    run_id = store.start("d", plan)
    store.close()
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db:
        db.execute(f"UPDATE runs SET options = {edit}")
        db.commit()
    return run_id


@pytest.mark.parametrize(
    "edit",
    [
        "json_remove(options, '$.settings.judge_base_url')",
        "json_set(json_remove(options, '$.settings.judge_base_url'), '$.settings.judge', "
        "'anthropic:claude-haiku-4-5')",
    ],
    ids=["base-url-removed", "switched-to-anthropic"],
)
def test_a_history_edited_to_send_the_key_to_a_public_host_sends_none(
    tmp_path: Path, loopback: LoopbackServer, edit: str
) -> None:
    run_id = stored_openai_run(tmp_path, loopback, edit)
    plain = vera(tmp_path, "eval", "--resume", run_id, "--history", "h.sqlite")
    named = vera(tmp_path, "eval", "--resume", run_id, "--history", "h.sqlite",
                 "--judge-base-url", loopback.openai_url)  # fmt: skip
    for done in (plain, named):
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    assert "--judge: stored" in " ".join(plain.stderr.split())  # the public host: name it
    assert "--judge-base-url: stored None, given" in " ".join(named.stderr.split())
    assert loopback.request_count == 0


def test_data_given_from_python_is_checked_by_its_samples(tmp_path: Path) -> None:
    rows = [
        {"id": f"s{i}", "query": "q", "response": f"It is {i}.", "contexts": [f"It is {i}."]}
        for i in range(4)
    ]
    settings = Settings(history=True, history_path=tmp_path / "h.sqlite")
    plan = build_plan(dataset=DatasetRef(), settings=settings)
    first = run_plan(plan, Bindings(data=InMemoryDataset(rows)))
    assert first.exit_code == 0 and first.run_id is not None

    same = run_plan(plan, Bindings(data=InMemoryDataset(rows)), resume=first.run_id)
    assert same.exit_code == 0
    rows[2] = rows[2] | {"response": "It is not."}
    with pytest.raises(ConfigError, match="has changed since the run started"):
        run_plan(plan, Bindings(data=InMemoryDataset(rows)), resume=first.run_id)
