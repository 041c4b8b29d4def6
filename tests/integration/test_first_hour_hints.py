"""Issue 44, item 1: every hint a newcomer meets in the first hour is true when followed.

Each test runs `vera` as a user does (a subprocess in a folder of theirs) and follows the hint
literally: the output file the suffix names, the `--field` flags a refusal gives, the
commands `vera conversations` closes with.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.support.cli import run_vera

from vera.datasets import bundled_path

ROWS = [
    {
        "prompt": "How long is the refund window?",
        "output": "Refunds are accepted within 30 days of purchase.",
        "docs": [
            "Our policy: refunds are accepted within 30 days of purchase.",
            "Ships in 5 days.",
        ],
    },
    {
        "prompt": "How long does shipping take?",
        "output": "Shipping takes 5 days.",
        "docs": ["Shipping takes 5 days within the country."],
    },
]


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _flags(said: str) -> list[str]:
    """The `--field F=C` flags a message gives, in its order."""
    words = said.split()
    return [
        part for i, word in enumerate(words) if word == "--field" for part in (word, words[i + 1])
    ]


def test_the_output_suffix_decides_the_format_in_every_command(tmp_path: Path) -> None:
    quick = run_vera(tmp_path, "eval", "--quick", "--no-history", "-o", "quick.html")
    assert quick.returncode == 1, (
        quick.stderr
    )  # the example's unfaithful answers fail the answer gate (--max-unfaithful 0)
    assert (tmp_path / "quick.html").read_text().lstrip().lower().startswith("<!doctype html")
    md = run_vera(tmp_path, "eval", "--quick", "--no-history", "-o", "quick.md")
    assert md.returncode == 1, md.stderr
    assert (tmp_path / "quick.md").read_text().startswith("### VERA")
    plain = run_vera(tmp_path, "eval", "--quick", "--no-history", "-o", "quick")
    assert json.loads((tmp_path / "quick").read_text())["dataset"] == "example"
    assert plain.returncode == 1
    turns = str(bundled_path("conversations"))
    refused = run_vera(tmp_path, "conversations", turns, "--no-history", "-o", "t.md")
    assert refused.returncode == 2
    assert "does not write" in refused.stderr and ".json or .html" in refused.stderr
    assert not (tmp_path / "t.md").exists()


def test_a_contexts_hint_names_the_list_column_and_following_it_scores(tmp_path: Path) -> None:
    _write(tmp_path / "pod.jsonl", ROWS)
    refused = run_vera(tmp_path, "eval", "-d", "pod.jsonl", "--no-history")
    assert refused.returncode == 2, refused.stdout
    said = " ".join(refused.stderr.split())
    assert "column 'docs' holds a list of texts" in said
    assert "'prompt' a shorter text, likely the question" in said
    flags = _flags(said)
    assert flags == ["--field", "contexts=docs", "--field", "query=prompt"]
    followed = run_vera(tmp_path, "eval", "-d", "pod.jsonl", "--no-history", *flags, "-o", "r.json")
    assert followed.returncode == 0, followed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["metric_summary"]["faithfulness"]["passed"] == 2
    assert report["unrecognised_fields"] == []


def test_a_response_column_named_reply_is_named_with_its_flag(tmp_path: Path) -> None:
    rows = [{"question": r["prompt"], "reply": r["output"], "contexts": r["docs"]} for r in ROWS]
    _write(tmp_path / "reply.jsonl", rows)
    refused = run_vera(tmp_path, "eval", "-d", "reply.jsonl")
    assert refused.returncode == 2
    said = " ".join(refused.stderr.split())
    assert "column 'reply' holds the longest text" in said
    assert "Evaluated" not in refused.stderr  # refused before any sample was run
    assert "No runs" in run_vera(tmp_path, "runs", "list").stderr  # and nothing stored
    flags = _flags(said)
    assert flags == ["--field", "response=reply"]
    followed = run_vera(tmp_path, "eval", "-d", "reply.jsonl", *flags, "-o", "r.json")
    assert followed.returncode == 0, followed.stderr
    assert json.loads((tmp_path / "r.json").read_text())["counts"]["scored"] == 2


def test_the_commands_vera_conversations_closes_with_work(tmp_path: Path) -> None:
    shown = run_vera(tmp_path, "conversations", str(bundled_path("conversations")))
    assert shown.returncode in (0, 1), shown.stderr
    line = next(x for x in shown.stdout.splitlines() if x.startswith("Turn run stored as"))
    commands = line.split(": ", 1)[1].split("; ")
    assert commands[0].startswith("vera runs show ")
    for command in commands[:2]:
        done = run_vera(tmp_path, *shlex.split(command)[1:])
        assert done.returncode == 0, (command, done.stderr)
    assert (tmp_path / "turns.html").exists()


def test_vera_s_own_expected_score_is_not_reported_as_unread(tmp_path: Path) -> None:
    legal = run_vera(tmp_path, "eval", "--dataset", "legal", "--baseline", "naive-rag")
    assert legal.returncode == 0, legal.stderr
    assert "expected_score" not in legal.stdout + legal.stderr
    assert "Not VERA fields" not in legal.stdout


def test_a_typo_in_a_bundled_dataset_name_gets_did_you_mean(tmp_path: Path) -> None:
    typo = run_vera(tmp_path, "eval", "--dataset", "legal_mini", "--no-history")
    assert typo.returncode == 2
    assert "did you mean the bundled dataset 'legal'? (--dataset legal)" in typo.stderr
    unknown = run_vera(tmp_path, "eval", "--dataset", "zzz", "--no-history")
    assert unknown.returncode == 2
    assert "no bundled dataset of that name (conversations, example, legal" in unknown.stderr


def test_a_missing_brace_at_the_end_of_a_line_is_placed_there(tmp_path: Path) -> None:
    good = '{"query": "q", "response": "r", "contexts": ["r"]}'
    broken = '{"query": "q2", "response": "r2", "contexts": ["r2"]'
    (tmp_path / "b.jsonl").write_text(f"{good}\n{broken}\n")
    (tmp_path / "b.json").write_text(f"[{good},\n{broken}\n]")
    jsonl = run_vera(tmp_path, "eval", "-d", "b.jsonl", "--no-history")
    assert jsonl.returncode == 2
    assert f"line 2: invalid JSON at column {len(broken) + 1}" in jsonl.stderr
    assert "a closing '}' or ']' missing?" in jsonl.stderr
    whole = run_vera(tmp_path, "eval", "-d", "b.json", "--no-history")
    assert whole.returncode == 2
    assert f"line 2, column {len(broken) + 1}: invalid JSON" in whole.stderr


def test_a_dry_run_with_an_llm_judge_says_its_key_is_missing(tmp_path: Path) -> None:
    args = ("eval", "--quick", "--judge", "openai:gpt-4o-mini", "--dry-run", "--no-history")
    without = run_vera(tmp_path, *args)
    assert without.returncode == 0, without.stderr
    assert "OPENAI_API_KEY is not set" in " ".join(without.stderr.split())
    with_key = run_vera(tmp_path, *args, OPENAI_API_KEY="sk-test")
    assert "OPENAI_API_KEY" not in with_key.stderr
