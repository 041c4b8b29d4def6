"""Rubrics from vera.toml through the CLI: `vera rubric items` shows and writes the checklist,
an edited file is passed back, `vera metrics` lists rubrics, and the dry run counts the calls
a run makes. The CLI runs in a subprocess against a scripted OpenAI server on 127.0.0.1 (see
`tests.support.scripted`: an item naming a word in single quotes is NOT_MET by a text holding
it). Hand-checked on the example's ex-01, whose claims are c1 "... thirty (30) days' ..." and
c2 "Customer must still pay ...".
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.loopback import LoopbackServer, Recorded, Reply
from tests.support.scripted import scripted_openai

RUBRIC = """
[[rubric]]
name = "plain_terms"
criteria = "Never says 'must'. Gives no figure in 'days'."
scope = "claim"
applies_to = ["fact_single"]
"""


def vera(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "HOME": str(tmp_path),
            "COLUMNS": "200",
            "OPENAI_API_KEY": "sk-loopback",
            "VERA_CACHE_DIR": str(tmp_path / "cache"),
        },
    )


def configure(tmp_path: Path, loopback: LoopbackServer, rubrics: str = RUBRIC) -> None:
    (tmp_path / "vera.toml").write_text(
        # A hosted model on loopback: asked in the compact prompts, where rubrics ride.
        f'judge = "openai:gpt-4o-mini"\njudge_base_url = "{loopback.openai_url}"\n'
        'judge_replies = "compact"\n'
        f'history = false\nmax_unfaithful = "100%"\n{rubrics}'
    )


def counting(seen: list[str]) -> "object":
    def serve(request: Recorded) -> Reply:
        seen.append(request.json["messages"][-1]["content"])
        return scripted_openai(request)

    return serve


def test_items_are_shown_written_edited_and_passed_back_without_a_checklist_call(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    seen: list[str] = []
    loopback.default = counting(seen)
    configure(tmp_path, loopback)
    shown = vera(tmp_path, "rubric", "items", "plain_terms", "--write", "plain.toml")
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"fingerprint [0-9a-f]{16}, written by openai:gpt-4o-mini", shown.stdout)
    assert "1. Never says 'must'." in shown.stdout
    assert "2. Gives no figure in 'days'." in shown.stdout
    assert len(seen) == 1
    # The user drops the second item and passes the file back in place of the criteria.
    edited = (tmp_path / "plain.toml").read_text()
    edited = edited[: edited.rindex("[[rubric.items]]")]
    (tmp_path / "plain.toml").write_text(edited)
    configure(tmp_path, loopback, rubrics='rubrics_file = "plain.toml"\n')
    seen.clear()
    run = vera(tmp_path, "eval", "--dataset", "example", "-o", "r.json")
    assert run.returncode == 0, run.stderr
    assert not [p for p in seen if "<criteria>" in p]  # the user's items: nothing to write
    report = json.loads((tmp_path / "r.json").read_text())
    ex01 = next(s for s in report["samples"] if s["id"] == "ex-01")["results"]["plain_terms"]
    # c1 meets item 1, c2 ("must") breaks it: 1 of 2 pairs met.
    assert ex01["score"] == 0.5
    assert ex01["details"]["breaking"] == {"c2": ["1"]}
    assert ex01["details"]["written_by"] == "user"
    assert [item["text"] for item in ex01["details"]["items"]] == ["Never says 'must'."]


def planned_calls(tmp_path: Path, *args: str) -> int:
    dry = vera(tmp_path, "eval", "--dataset", "example", "--dry-run", *args)
    assert dry.returncode == 0, dry.stderr
    found = re.search(r"(\d+) calls", " ".join(dry.stdout.split()))
    assert found is not None, dry.stdout
    return int(found.group(1))


def test_the_dry_run_counts_the_rubric_calls_the_run_makes(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    """The claims the dry run prices are the offline splitter's, an estimate of the judge's
    (it finds none in two abstentions the scripted judge splits): so the rubric's own calls
    are compared, the dry run with the rubric less the one without it. The rubric's items
    ride on the verification calls faithfulness makes anyway (docs/metrics.md, "Rubrics"):
    its own call is the checklist's."""
    seen: list[str] = []
    loopback.default = counting(seen)
    configure(tmp_path, loopback)
    with_rubric = planned_calls(tmp_path)
    without = planned_calls(tmp_path, "-m", "faithfulness")
    assert not seen
    run = vera(tmp_path, "eval", "--dataset", "example")
    assert run.returncode == 0, run.stderr
    riding = [p for p in seen if 'under "rubric"' in p]
    rubric_calls = [p for p in seen if ("<items>" in p or "<criteria>" in p) and p not in riding]
    # The checklist once; the items ride on each fact_single answer's verification call.
    assert len(rubric_calls) == 1
    assert len(riding) == 6
    assert with_rubric - without == len(rubric_calls)


def test_vera_metrics_lists_the_rubrics_of_vera_toml_with_their_inputs(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    configure(tmp_path, loopback)
    listed = vera(tmp_path, "metrics")
    assert listed.returncode == 0, listed.stderr
    text = " ".join(listed.stdout.split())
    assert "plain_terms" in text
    assert "rubric (claim): Never says 'must'. Gives no figure in 'days'." in text
    assert "inputs: response, contexts, query" in text
    assert "[[rubric]] tables in vera.toml" in text


def test_a_wrong_rubric_table_is_a_usage_error_naming_the_field(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    configure(tmp_path, loopback, rubrics='[[rubric]]\nname = "x"\nscope = "sentence"\n')
    run = vera(tmp_path, "eval", "--dataset", "example")
    assert run.returncode == 2
    assert "rubric" in run.stderr and "scope" in run.stderr
