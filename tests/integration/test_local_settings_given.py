"""A local judge's defaults (one call in flight, long timeouts) replace only the settings left
unset (issue 45): a value given equal to VERA's default is kept, whether Python, vera.toml or a
flag gave it, and a stored run resumes with the settings it was given. The judge is the real
OpenAI SDK against a server on 127.0.0.1 that counts the calls it holds at once."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer, Recorded, Reply
from tests.support.scripted import scripted_openai

import vera
from vera import RunPlan, RunStore, Settings, load_settings
from vera.providers._ready import LOCAL_DEFAULTS, local_defaults

WHITEBOX = "the local-server defaults' table"


class InFlight:
    """A server's answer that holds each chat call until `target` calls are held at once, or
    until `patience` seconds after the first call (from then on none is held), and counts the
    most calls it held at once. The calls are answered by `answer`."""

    def __init__(
        self, target: int, patience: float, answer: Callable[[Recorded], Reply] = scripted_openai
    ) -> None:
        self.target, self.patience, self.answer = target, patience, answer
        self.now = self.most = 0
        self._first: float | None = None
        self._released = False
        self._turn = threading.Condition()

    def __call__(self, request: Recorded) -> Reply:
        with self._turn:
            self.now += 1
            self.most = max(self.most, self.now)
            self._first = self._first or time.monotonic()
            self._released = self._released or self.now >= self.target
            self._turn.notify_all()
            while not self._released:
                left = self._first + self.patience - time.monotonic()
                if left <= 0:
                    self._released = True
                    break
                self._turn.wait(left)
            self.now -= 1
        return self.answer(request)


def _samples(count: int) -> list[vera.Sample]:
    return [
        vera.Sample(
            id=f"s{i}", query="Who wrote it?", response="Ann wrote it.", contexts=["Ann wrote it."]
        )
        for i in range(count)
    ]


def _evaluate(server: LoopbackServer, samples: int, settings: Settings) -> vera.Report:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vera.GateWarning)
        return vera.evaluate(
            _samples(samples),
            ["faithfulness"],
            judge="openai:qwen",
            settings=settings.merge(
                {"judge_base_url": server.openai_url, "cache": False}, origin="test"
            ),
        )


def test_calls_in_flight_given_equal_to_the_default_are_kept_for_a_local_server() -> None:
    with LoopbackServer() as server:
        server.default = held = InFlight(target=16, patience=5.0)
        report = _evaluate(server, 16, Settings(provider_concurrency=16, concurrency=16))
        assert {s.status.value for s in report.samples} == {"scored"}
        assert held.most == 16


def test_calls_in_flight_left_unset_are_one_for_a_local_server() -> None:
    with LoopbackServer() as server:
        server.default = held = InFlight(target=2, patience=1.0)
        report = _evaluate(server, 3, Settings(concurrency=3))
        assert {s.status.value for s in report.samples} == {"scored"}
        assert held.most == 1


def test_a_setting_in_vera_toml_or_a_flag_equal_to_the_default_is_kept(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text("provider_concurrency = 16\n")
    settings = load_settings(
        {"timeout": 60.0, "judge": "openai:q", "judge_base_url": "http://127.0.0.1:8080/v1"},
        directory=tmp_path,
        environ={},
    )
    assert settings.provider_concurrency == Settings().provider_concurrency
    assert settings.timeout == Settings().timeout
    changed = local_defaults(settings, settings.judge, settings.judge_base_url)
    assert changed == {"sample_timeout": LOCAL_DEFAULTS["sample_timeout"]}


def test_vera_toml_calls_in_flight_equal_to_the_default_reach_a_cli_run(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text("provider_concurrency = 16\n")
    (tmp_path / "d.jsonl").write_text(
        "".join(
            s.model_dump_json(include={"id", "query", "response", "contexts"}) + "\n"
            for s in _samples(16)
        )
    )
    with LoopbackServer() as server:
        server.default = held = InFlight(target=16, patience=5.0)
        done = run_vera(
            tmp_path, "eval", "--dataset", "d.jsonl", "--judge", "openai:qwen",
            "--judge-base-url", server.openai_url, "--no-cache", "--no-history",
            "--concurrency", "16", "-o", "r.json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert held.most == 16


def _plan(**given: object) -> RunPlan:
    settings = Settings(judge="openai:q", judge_base_url="http://127.0.0.1:8080/v1", **given)
    return RunPlan(settings=settings)


def test_a_stored_run_keeps_the_settings_it_was_given(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite")
    run_id = store.start("d.jsonl", _plan(provider_concurrency=16, timeout=60.0))
    settings = store.plan(run_id).settings
    assert local_defaults(settings, settings.judge, settings.judge_base_url) == {
        "sample_timeout": LOCAL_DEFAULTS["sample_timeout"]
    }
    store.close()


def test_a_run_stored_before_settings_kept_what_was_given_reads_them_by_value(
    tmp_path: Path,
) -> None:
    # VERA stored every setting's value and told given from unset by value: such a run
    # resumes with the defaults it ran with (local ones where a value equals VERA's default).
    store = RunStore(tmp_path / "h.sqlite")
    options = json.loads(_plan(provider_concurrency=16, timeout=30.0).model_dump_json())
    del options["settings"]["given"]
    run_id = store.start("d.jsonl", RunPlan())
    store.close()
    with sqlite3.connect(tmp_path / "h.sqlite") as db:
        db.execute("UPDATE runs SET options = ? WHERE id = ?", (json.dumps(options), run_id))
    db.close()
    settings = RunStore(tmp_path / "h.sqlite").plan(run_id).settings
    changed = local_defaults(settings, settings.judge, settings.judge_base_url)
    assert changed == {
        key: LOCAL_DEFAULTS[key] for key in ("sample_timeout", "provider_concurrency")
    }


def test_a_run_stored_before_settings_kept_what_was_given_resumes_from_the_cli(
    tmp_path: Path,
) -> None:
    (tmp_path / "d.jsonl").write_text(
        "".join(
            s.model_dump_json(include={"id", "query", "response", "contexts"}) + "\n"
            for s in _samples(6)
        )
    )
    history = tmp_path / "h.sqlite"
    with LoopbackServer() as server:
        settings = Settings(judge_base_url=server.openai_url, cache=False, concurrency=4)
        server.default = scripted_openai
        first = vera.run_evaluation(
            tmp_path / "d.jsonl", ["faithfulness"], "openai:qwen", settings=settings,
            history=history,
        )  # fmt: skip
        assert first.run_id is not None and first.exit_code == 0
        # As VERA stored it before: every value, not which were given; interrupted half-way.
        with sqlite3.connect(history) as db:
            (options,) = db.execute("SELECT options FROM runs").fetchone()
            old = json.loads(options)
            del old["settings"]["given"]
            db.execute("UPDATE runs SET options = ?, status = 'running'", (json.dumps(old),))
            db.execute("DELETE FROM results WHERE sample_id IN ('s1', 's3', 's5')")
        db.close()
        server.default = held = InFlight(target=2, patience=1.0)
        resumed = run_vera(
            tmp_path, "eval", "--resume", first.run_id, "--history", str(history),
            "--judge-base-url", server.openai_url, "-o", "r.json",
        )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert sorted(s["id"] for s in report["samples"]) == [f"s{i}" for i in range(6)]
    assert held.most == 1  # the default left unset: one call at a time, as the run began
