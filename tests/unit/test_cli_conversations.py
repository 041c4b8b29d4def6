"""`vera conversations` and `vera eval -d conversations`, as a user runs them."""

import json
import re
from pathlib import Path

import pytest
from tests.support.cli import run_vera

# Each test starts `vera` in subprocesses: out of the quick loop (CONTRIBUTING.md).
pytestmark = pytest.mark.slow


def test_threads_gates_and_the_turns_json(tmp_path: Path) -> None:
    done = run_vera(
        tmp_path, "conversations", "conversations", "--min-faithful-turns", "0.9", "-o", "t.json"
    )
    assert done.returncode == 1, done.stderr
    assert "gate failed: faithful turns 0.778 < 0.9" in done.stderr
    assert "CONTRADICTED [earlier-turn get_account, turn 4] You pay 240 USD" in done.stdout
    block = json.loads((tmp_path / "t.json").read_text())
    assert block["faithful_turns"] == 28 / 36
    first = block["conversations"][0]
    assert first["first_unfaithful_turn"] == 9
    assert first["turns"][0]["claims"][0]["source_kind"] == "tool"


def test_a_passing_gate_exits_0_and_bad_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "What does Pro cost?"},
                    {
                        "role": "assistant",
                        "content": "Pro costs 20 dollars.",
                        "contexts": ["Pro costs 20 dollars a month."],
                    },
                ]
            }
        )
        + "\n"
    )
    assert (
        run_vera(tmp_path, "conversations", "c.jsonl", "--min-faithful-turns", "1").returncode == 0
    )
    # One assistant turn: consistency is not measured, so a consistency gate cannot pass.
    vacuous = run_vera(tmp_path, "conversations", "c.jsonl", "--min-consistency", "0.5")
    assert vacuous.returncode == 1
    assert "consistency measured on no conversation" in vacuous.stderr
    (tmp_path / "bad.jsonl").write_text('{"messages": [{"role": "robot", "content": "x"}]}\n')
    bad = run_vera(tmp_path, "conversations", "bad.jsonl")
    assert bad.returncode == 2
    assert "line 1, field 'messages[0].role': unknown role 'robot'" in bad.stderr


def test_vera_eval_on_the_bundled_conversations(tmp_path: Path) -> None:
    done = run_vera(tmp_path, "eval", "-d", "conversations", "-o", "r.json")
    # Turns are answers: by default no unfaithful one passes, and the bundled conversations
    # plant some. The report is written all the same.
    assert done.returncode == 1, done.stderr
    assert "unfaithful answers: 8 of 36 answers have" in done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert len(report["samples"]) == 36
    assert report["samples"][0]["id"] == "conv-01/turn-5"


def test_the_html_threads_escape_what_came_from_the_data(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text(
        json.dumps(
            {
                "id": "<b>x</b>",
                "messages": [
                    {"role": "user", "content": "What does <script>alert(1)</script> cost?"},
                    {
                        "role": "assistant",
                        "content": "Pro costs 20 dollars.",
                        "contexts": ["Pro costs 20 dollars a month."],
                    },
                ],
            }
        )
        + "\n"
    )
    done = run_vera(tmp_path, "conversations", "c.jsonl", "-o", "t.html")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "t.html").read_text()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    # Each claim beside its verdict badge and the source it rests on.
    assert (
        '<span dir="auto">Pro costs 20 dollars.</span> '
        '<span class="source small muted" data-kind="retrieved" dir="auto">retrieved, turn 2</span>'
    ) in page
    assert page.count('<span class="verdict v-') == 1


def test_dry_run_counts_both_runs_and_judges_nothing(tmp_path: Path) -> None:
    done = run_vera(tmp_path, "conversations", "conversations", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "36 turns" in done.stdout and "consistency check: 24 turns" in done.stdout
    assert "Conversation conv-01" not in done.stdout


USER_FACT = {
    "id": "u",
    "messages": [
        {"role": "user", "content": "My order number is 4417."},
        {"role": "assistant", "content": "Your order number is 4417."},
    ],
}


def test_no_user_facts_in_vera_eval_python_and_vera_toml(tmp_path: Path) -> None:
    import vera

    (tmp_path / "c.jsonl").write_text(json.dumps(USER_FACT) + "\n")
    counted = vera.evaluate(tmp_path / "c.jsonl")
    left_out = vera.evaluate(tmp_path / "c.jsonl", user_facts=False)
    assert counted.samples[0].claims[0].verdict is vera.Verdict.FULLY_SUPPORTED
    assert left_out.samples[0].claims[0].verdict is vera.Verdict.NO_EVIDENCE
    done = run_vera(tmp_path, "eval", "-d", "c.jsonl", "--no-user-facts", "-o", "r.json")
    # Without the user's word the one claim has no evidence: an unfaithful answer fails.
    assert done.returncode == 1, done.stderr
    assert "unfaithful answers: 1 of 1 answer has" in done.stderr
    [sample] = json.loads((tmp_path / "r.json").read_text())["samples"]
    assert sample["claims"][0]["verdict"] == "NO_EVIDENCE"
    (tmp_path / "vera.toml").write_text("user_facts = false\n")
    done = run_vera(tmp_path, "eval", "-d", "c.jsonl", "-o", "r2.json")
    [sample] = json.loads((tmp_path / "r2.json").read_text())["samples"]
    assert sample["claims"][0]["verdict"] == "NO_EVIDENCE"


def test_vera_eval_gates_on_faithful_turns_and_writes_the_conversation_block(
    tmp_path: Path,
) -> None:
    done = run_vera(
        tmp_path,
        "eval",
        "-d",
        "conversations",
        "--min-faithful-turns",
        "0.9",
        "--no-history",
        "-o",
        "run.json",
    )
    assert done.returncode == 1, done.stderr
    assert "faithful turns: 0.778 of 36 scored turns is below 0.900" in done.stdout + done.stderr
    assert "First unfaithful turn: conv-01 turn 9, conv-02 turn 7" in done.stdout
    block = json.loads((tmp_path / "run.json").read_text())["conversations"]
    assert block["conversations"][0]["first_unfaithful_turn"] == 9


def test_vera_conversations_stores_the_turn_run_for_runs_report_and_view(tmp_path: Path) -> None:
    done = run_vera(tmp_path, "conversations", "conversations")
    assert done.returncode == 0, done.stderr
    found = re.search(r"Turn run stored as (\d{8}-\d{6}-[0-9a-f]{6})", done.stdout)
    assert found, done.stdout
    run_id = found.group(1)
    listed = run_vera(tmp_path, "runs", "list")
    # One run: the consistency run is a helper of the conversation scores, not stored.
    assert listed.stdout.count(" finished ") == 1, listed.stdout
    assert run_id in listed.stdout
    again = run_vera(tmp_path, "report", run_id, "-o", "again.json")
    assert again.returncode == 0, again.stderr
    block = json.loads((tmp_path / "again.json").read_text())["conversations"]
    assert block["scored_turns"] == 36
    assert run_vera(tmp_path, "conversations", "conversations", "--no-history").returncode == 0
    assert run_vera(tmp_path, "runs", "list").stdout.count(" finished ") == 1


def test_vera_conversations_reads_user_facts_from_vera_toml(tmp_path: Path) -> None:
    chat = {
        "messages": [
            {"role": "user", "content": "I live in Berlin. Where do I live?"},
            {"role": "assistant", "content": "You live in Berlin."},
        ]
    }
    (tmp_path / "c.jsonl").write_text(json.dumps(chat) + "\n", encoding="utf-8")
    gate = ("--min-faithful-turns", "1", "--no-history")
    assert run_vera(tmp_path, "conversations", "c.jsonl", *gate).returncode == 0
    (tmp_path / "vera.toml").write_text("user_facts = false\n", encoding="utf-8")
    done = run_vera(tmp_path, "conversations", "c.jsonl", *gate)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "NO_EVIDENCE" in done.stdout
    # The flag still wins over the file.
    assert run_vera(tmp_path, "conversations", "c.jsonl", "--user-facts", *gate).returncode == 0


def test_vera_eval_shows_and_gates_consistency(tmp_path: Path) -> None:
    done = run_vera(
        tmp_path,
        "eval",
        "-d",
        "conversations",
        "--min-consistency",
        "0.9",
        "--group-by",
        "category",
        "--no-history",
        "-o",
        "r.json",
    )
    assert done.returncode == 1, done.stderr
    assert "Consistency 0.792 (claims that contradict no earlier assistant turn" in done.stdout
    assert "consistency: conv-02 0.500 is below 0.900" in done.stdout + done.stderr
    assert "Conversations by category: agent (6): faithful turns 0.789, consistency 0.769" in (
        " ".join(done.stdout.split())
    )
    block = json.loads((tmp_path / "r.json").read_text())["conversations"]
    assert (block["checked_claims"], block["consistency"]) == (24, 1 - 5 / 24)


def test_vera_eval_refuses_a_conversation_gate_without_conversations(tmp_path: Path) -> None:
    for flag in ("--min-consistency", "--min-faithful-turns"):
        done = run_vera(tmp_path, "eval", "-d", "example", flag, "0.5", "--no-history")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "no sample of this run is a conversation turn" in done.stderr


BOT = """
from vera import Turn

TOOL = "Account ACME: 12 seats, 9 seats in use."


def answer(history):
    asked = [t.content for t in history if t.role == "user"]
    if len(asked) == 1:
        return Turn(role="assistant", content="ACME has 12 seats.", tool_results=[TOOL])
    return "ACME has 11 seats in use."
"""
SEATS = {
    "id": "seats",
    "messages": [
        {"role": "user", "content": "How many seats does ACME have?"},
        {"role": "assistant", "content": "(recorded, replaced)"},
        {"role": "user", "content": "And how many are in use?"},
        {"role": "assistant", "content": "(recorded, replaced)"},
    ],
}


def test_an_assistant_replays_the_conversations_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT)
    (tmp_path / "c.jsonl").write_text(json.dumps(SEATS) + "\n")
    done = run_vera(
        tmp_path,
        "conversations",
        "c.jsonl",
        "--assistant",
        "bot:answer",
        "-o",
        "t.json",
        "--min-faithful-turns",
        "1",
    )
    assert done.returncode == 1, done.stderr
    assert "(recorded, replaced)" not in done.stdout
    assert "CONTRADICTED [earlier-turn" in done.stdout and "11 seats in use" in done.stdout
    first, second = json.loads((tmp_path / "t.json").read_text())["conversations"][0]["turns"]
    assert first["claims"][0]["source_kind"] == "tool"
    assert second["claims"][0]["verdict"] == "CONTRADICTED"
    dry = run_vera(tmp_path, "conversations", "c.jsonl", "--assistant", "bot:answer", "--dry-run")
    assert dry.returncode == 2 and "drop one of the two" in dry.stderr
    missing = run_vera(tmp_path, "conversations", "c.jsonl", "--assistant", "bot:nothing")
    assert missing.returncode == 2 and "bot has no callable 'nothing'" in missing.stderr
