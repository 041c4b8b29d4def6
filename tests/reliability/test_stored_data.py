"""Stored data never chooses code: a run history edited by hand (a CI cache, an artifact, a
shared folder) cannot make `vera eval --resume` import and call what it names.

The tampering is the one that used to work: a stored run's options edited to
`"pipeline": "os:system"`, so that resuming it ran each dataset query as a shell command.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import vera
from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer
from tests.support.scripted import scripted_openai
from vera import ConfigError, stored_plan

SOURCE = str(Path(vera.__file__).parent.parent)
"""The tree this test imports VERA from, for the `vera` it runs to use the same."""

RAG = "def answer(query):\n    return {'response': 'Fact.', 'contexts': ['Fact.']}\n"


def vera_cli(cwd: Path, *args: str) -> tuple[int, str]:
    done = run_vera(cwd, *args, PYTHONPATH=os.pathsep.join([str(cwd), SOURCE]))
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def tampered(tmp_path: Path) -> tuple[Path, str]:
    """A run of `my_rag:answer` whose stored plan now says `os:system`, with two samples left
    to evaluate; every query would create a file if it ran as a command."""
    (tmp_path / "my_rag.py").write_text(RAG)
    rows = [{"id": f"q{i}", "query": f"touch pwned-{i}"} for i in range(4)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl", "--pipeline", "my_rag:answer")
    assert code == 0, said
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute(
            "UPDATE runs SET status = 'running', report = NULL, "
            "options = json_set(options, '$.pipeline', 'os:system')"
        )
        db.execute("DELETE FROM results WHERE sample_id IN ('q2', 'q3')")
    return tmp_path, run_id


def test_a_tampered_pipeline_is_not_run_on_resume(tampered: tuple[Path, str]) -> None:
    folder, run_id = tampered
    code, said = vera_cli(folder, "eval", "--resume", run_id)
    assert code == 2
    assert "--pipeline: stored 'os:system', not given" in said
    assert "never chooses code to run" in said
    assert "Traceback" not in said
    assert not list(folder.glob("pwned-*"))


def test_a_pipeline_named_again_must_match_the_stored_one(tampered: tuple[Path, str]) -> None:
    folder, run_id = tampered
    code, said = vera_cli(folder, "eval", "--resume", run_id, "--pipeline", "my_rag:answer")
    assert code == 2
    assert "--pipeline: stored 'os:system', given 'my_rag:answer'" in said
    assert not list(folder.glob("pwned-*"))


def test_python_resume_refuses_the_same(tampered: tuple[Path, str]) -> None:
    folder, run_id = tampered
    history = folder / ".vera" / "runs.sqlite"
    with pytest.raises(ConfigError, match="--pipeline: stored 'os:system', not given"):
        stored_plan(run_id, history)
    with pytest.raises(ConfigError, match="stored 'os:system', given 'my_rag:answer'"):
        stored_plan(run_id, history, named={"pipeline": "my_rag:answer"})


def test_a_tampered_prompts_folder_and_plugin_judge_are_refused(tmp_path: Path) -> None:
    """Prompt files and judge plugins (an NLI model's files may hold pickled code) come from
    the user, never from the history."""
    (tmp_path / "d.jsonl").write_text(
        json.dumps({"id": "a", "query": "q", "response": "Fact.", "contexts": ["Fact."]}) + "\n"
    )
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl")
    assert code == 0, said
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute(
            "UPDATE runs SET status = 'running', options = json_set(options, "
            "'$.settings.judge_prompts_dir', '/tmp/elsewhere', '$.settings.judge', 'nli:/tmp/m', "
            "'$.settings.ray_address', 'ray://203.0.113.9:10001')"
        )
    code, said = vera_cli(tmp_path, "eval", "--resume", run_id)
    assert code == 2
    assert "--prompts-dir: stored '/tmp/elsewhere', not given" in said
    assert "--judge: stored 'nli:/tmp/m', not given" in said
    assert "--ray-address: stored 'ray://203.0.113.9:10001', not given" in said


def test_an_untampered_run_resumes_when_its_pipeline_is_named_again(
    tmp_path: Path,
) -> None:
    (tmp_path / "my_rag.py").write_text(RAG)
    rows = [{"id": f"q{i}", "query": f"question {i}"} for i in range(3)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl", "--pipeline", "my_rag:answer")
    assert code == 0, said
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute("DELETE FROM results WHERE sample_id = 'q1'")
    named = ("--pipeline", "my_rag:answer")
    code, said = vera_cli(tmp_path, "eval", "--resume", run_id, *named, "-o", "r.json")
    assert code == 0, said
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["scored"] == 3


def test_stored_options_nested_without_end_are_refused_not_recursed(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text(
        json.dumps({"id": "a", "query": "q", "response": "Fact.", "contexts": ["Fact."]}) + "\n"
    )
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl")
    assert code == 0, said
    deep = '{"plan_version": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute("UPDATE runs SET options = ?, status = 'running'", (deep,))
    code, said = vera_cli(tmp_path, "eval", "--resume", run_id)
    assert code == 2
    assert "Traceback" not in said
    # The history's reader names the damaged row before the plan is parsed.
    assert f"run {run_id} in .vera/runs.sqlite is damaged (its stored options" in said
    assert "field 'x': arrays or objects" in said and "256 levels deep" in said


def test_a_tampered_judge_server_gets_no_key_on_resume(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    # Not code, but where the provider key goes: a history edited to name another server
    # must not have the resumed run send it the key.
    (tmp_path / "d.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "response": "Fact.", "contexts": ["Fact."]}) + "\n"
            for i in range(3)
        )
    )
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl")
    assert code == 0, said
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute(
            "UPDATE runs SET status = 'running', report = NULL, options = json_set(options, "
            "'$.settings.judge', 'openai:gpt-4o-mini', '$.settings.judge_base_url', ?)",
            (loopback.openai_url,),
        )
        db.execute("DELETE FROM results WHERE sample_id = 'q2'")
    done = run_vera(
        tmp_path,
        "eval",
        "--resume",
        run_id,
        OPENAI_API_KEY="sk-must-stay-here",
        PYTHONPATH=os.pathsep.join([str(tmp_path), SOURCE]),
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert f"--judge-base-url: stored {loopback.openai_url!r}, not given" in said
    assert loopback.requests == []
    # Named again, the user chooses that server, and the run goes on there.
    loopback.default = scripted_openai
    named = ("--judge-base-url", loopback.openai_url)
    done = run_vera(
        tmp_path,
        "eval",
        "--resume",
        run_id,
        *named,
        OPENAI_API_KEY="sk-loopback",
        PYTHONPATH=os.pathsep.join([str(tmp_path), SOURCE]),
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert loopback.requests
