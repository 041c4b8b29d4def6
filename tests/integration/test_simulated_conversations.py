"""`vera generate --conversations` against the loopback server with the real OpenAI SDK: a
scripted simulated user (tests.support.simulated_user) talks to a toy assistant
(tests.support.toy_assistant); the scripted judge checks each user turn. What stops a
conversation, what a turn that invents a fact costs, what is written, and the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.support import toy_assistant
from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer, Recorded, Reply, error
from tests.support.simulated_user import SimulatedUser, say

from vera import (
    DatasetRowError,
    Settings,
    estimate_simulation,
    read_scenarios,
    simulate_conversations,
    write_conversations,
)
from vera._conversations import Scenario, SimulationResult
from vera.datasets._conversations import read_conversations
from vera.providers import Price, PriceTable, Usage

WHITEBOX = "the generator's own parts"

SIMULATOR = "openai:loopback-model"
JUDGE = "openai:loopback-model"
KEY = "sk-test-never-shown"

REFUND = "Learn how an annual plan is refunded"
SEATS = "Find out what extra seats cost"
DISCOUNT = "Get a student discount"
ACCOUNT = "Add seats to account ACME-17"
FACT = "My account id is ACME-17."


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """The toy assistant's two help pages, one text file each: what user turns are checked
    against."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in toy_assistant.PAGES.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _run(
    loopback: LoopbackServer,
    docs: Path,
    scenarios: list[Scenario] | int,
    turns: int,
    assistant: Any = None,
) -> SimulationResult:
    settings = Settings(
        judge=JUDGE, judge_base_url=loopback.openai_url, cache_path=docs.parent / "c.sqlite"
    )
    return simulate_conversations(
        scenarios,
        assistant or toy_assistant.answer,
        SIMULATOR,
        documents_dir=docs,
        turns=turns,
        settings=settings,
        simulator_base_url=loopback.openai_url,
    )


THREE = {
    REFUND: [say("How is an annual plan refunded?"), say("Thanks!", goal_reached=True)],
    SEATS: [say("What does an extra seat cost?"), say("And how do I add one?")],
    DISCOUNT: [say("Is there a student discount?"), say("Never mind.", give_up=True)],
}


@pytest.mark.parametrize("kind", ["plain", "async"])
def test_each_conversation_stops_on_goal_give_up_or_the_turn_limit(
    loopback: LoopbackServer, docs: Path, kind: str
) -> None:
    user = SimulatedUser(THREE)
    loopback.default = user
    scenarios = [Scenario(id="refund", goal=REFUND), Scenario(id="seats", goal=SEATS)]
    scenarios.append(Scenario(id="discount", goal=DISCOUNT, persona="a student"))
    assistant = toy_assistant.answer if kind == "plain" else toy_assistant.answer_async
    result = _run(loopback, docs, scenarios, turns=2, assistant=assistant)

    assert result.stops == {"goal_reached": 1, "turn_limit": 1, "gave_up": 1}
    assert result.invented_turns == 0 and result.empty == 0
    by_id = {row["id"]: row for row in result.conversations}
    assert {k: v["metadata"]["stop_reason"] for k, v in by_id.items()} == {
        "sim-refund": "goal_reached",
        "sim-seats": "turn_limit",
        "sim-discount": "gave_up",
    }
    # the user speaks, the assistant answers: one exchange, two at the turn limit
    assert [len(by_id[k]["turns"]) for k in ("sim-refund", "sim-seats", "sim-discount")] == [
        2,
        4,
        2,
    ]
    seats = by_id["sim-seats"]["turns"]
    assert seats[2]["content"] == "And how do I add one?"
    assert seats[1]["content"] == "Each extra seat costs 15 USD a month."
    assert seats[1]["contexts"][0]["id"] == "seats"
    assert by_id["sim-discount"]["metadata"]["scenario"]["persona"] == "a student"
    # after the turn limit's last answer the user is asked once more (goal reached or not)
    asked = [(REFUND, 0), (REFUND, 1), (SEATS, 0), (SEATS, 1), (SEATS, 2)]
    assert sorted(user.asked) == sorted([*asked, (DISCOUNT, 0), (DISCOUNT, 1)])

    written = docs.parent / "sim.jsonl"
    write_conversations(result, written)
    conversations = {c.id: c for c in read_conversations(written)}
    assert [t.role for t in conversations["sim-seats"].turns] == ["user", "assistant"] * 2
    assert conversations["sim-seats"].turns[1].contexts[0].text == toy_assistant.PAGES["seats"]
    assert conversations["sim-refund"].metadata["stop_reason"] == "goal_reached"


def test_a_user_turn_that_invents_a_fact_is_dropped_and_counted(
    loopback: LoopbackServer, docs: Path
) -> None:
    quote = "Each extra seat costs 15 USD a month."
    loopback.default = SimulatedUser(
        {
            # The scripted judge finds a claim holding "60" contradicted: a fact invented.
            REFUND: [say("I paid 60 USD for the annual plan. Can I get it back?")],
            ACCOUNT: [
                say(
                    f"{FACT} An extra seat costs 15 USD a month, right?",
                    ("scenario", FACT),
                    ("seats.txt", quote),
                ),
                say("Seats cost 12 USD, it says so.", ("seats.txt", "Seats cost 12 USD.")),
            ],
        }
    )
    scenarios = [Scenario(id="refund", goal=REFUND), Scenario(id="acct", goal=ACCOUNT)]
    scenarios[1] = Scenario(id="acct", goal=ACCOUNT, facts=(FACT,))
    result = _run(loopback, docs, scenarios, turns=3)

    assert result.invented_turns == 2
    assert result.stops == {"invented_fact": 2}
    assert result.empty == 1  # the refund conversation ended before its first answer
    [kept] = result.conversations
    assert kept["id"] == "sim-acct" and kept["metadata"]["stop_reason"] == "invented_fact"
    assert [t["role"] for t in kept["turns"]] == ["user", "assistant"]  # the 2nd turn dropped
    assert kept["metadata"]["scenario"]["facts"] == [FACT]


def test_the_reply_after_the_turn_limit_is_not_checked_or_kept(
    loopback: LoopbackServer, docs: Path
) -> None:
    # Past the limit the reply only says whether the goal was met: its message joins no
    # conversation, so a fact it invents ("60", contradicted by the scripted judge) costs
    # nothing.
    loopback.default = SimulatedUser({SEATS: [say("What does a seat cost?"), say("I paid 60.")]})
    result = _run(loopback, docs, [Scenario(id="seats", goal=SEATS)], turns=1)
    assert result.stops == {"turn_limit": 1} and result.invented_turns == 0
    [row] = result.conversations
    assert [t["content"] for t in row["turns"] if t["role"] == "user"] == ["What does a seat cost?"]


def test_scenarios_are_written_from_the_documents_when_none_are_given(
    loopback: LoopbackServer, docs: Path
) -> None:
    written = [{"goal": REFUND, "persona": "a buyer"}, {"persona": "no goal"}]
    user = SimulatedUser(THREE, scenarios=[*written, {"goal": SEATS, "persona": "an admin"}])
    loopback.default = user
    result = _run(loopback, docs, 3, turns=2)

    [prompt] = user.scenario_prompts  # one call writes up to ten
    assert "Write 3 scenarios" in prompt and "(document: seats.txt)" in prompt
    assert result.scenarios == 2 and result.scenarios_dropped == 1  # the entry without a goal
    assert result.stops == {"goal_reached": 1, "turn_limit": 1}
    scenarios = [row["metadata"]["scenario"] for row in result.conversations]
    assert sorted((s["id"], s["goal"], s["persona"]) for s in scenarios) == [
        ("scenario-1", REFUND, "a buyer"),
        ("scenario-2", SEATS, "an admin"),
    ]


def test_a_bad_scenario_file_names_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"goal": REFUND}) + "\n" + json.dumps({"persona": "x"}) + "\n")
    with pytest.raises(DatasetRowError) as caught:
        read_scenarios(path)
    assert str(caught.value) == f"{path}: line 2, field 'goal': expected a non-empty string"
    path.write_text(json.dumps({"goal": REFUND, "facts": "ACME-17"}) + "\n")
    with pytest.raises(DatasetRowError, match="line 1, field 'facts'"):
        read_scenarios(path)
    path.write_text(json.dumps({"goal": REFUND, "id": "r", "facts": [FACT]}) + "\n")
    assert read_scenarios(path) == [Scenario(id="r", goal=REFUND, facts=(FACT,))]


def test_the_cli_writes_conversations_vera_eval_reads(loopback: LoopbackServer, docs: Path) -> None:
    loopback.default = SimulatedUser(THREE)
    folder = docs.parent
    shutil.copy(Path(toy_assistant.__file__), folder / "bot.py")
    (folder / "s.jsonl").write_text(
        "\n".join(json.dumps({"id": k, "goal": g}) for k, g in [("r", REFUND), ("s", SEATS)])
    )
    args = ["generate", "--conversations", "--documents", str(docs), "--generator", SIMULATOR]
    args += ["--generator-base-url", loopback.openai_url, "--judge", JUDGE]
    args += ["--judge-base-url", loopback.openai_url, "--assistant", "bot:answer"]
    made = run_vera(folder, *args, "--scenarios", "s.jsonl", "--turns", "2", "-o", "c.jsonl",
                    OPENAI_API_KEY=KEY)  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    assert "Wrote 2 of 2 simulated conversations" in made.stdout
    assert "goal_reached: 1" in made.stdout and "turn_limit: 1" in made.stdout
    assert len((folder / "c.jsonl").read_text().splitlines()) == 2

    evaluated = run_vera(folder, "eval", "--dataset", "c.jsonl", "--no-history")
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert "Conversations: 2" in evaluated.stdout and "3 scored, 0 errors" in evaluated.stdout

    loopback.default = SimulatedUser(THREE, scenarios=[{"goal": REFUND, "persona": "p"}])
    drafted = run_vera(folder, *args, "--n", "1", "-o", "g.jsonl", OPENAI_API_KEY=KEY)
    assert drafted.returncode == 0, drafted.stdout + drafted.stderr
    assert "Wrote 1 of 1 simulated conversations" in drafted.stdout
    assert json.loads((folder / "g.jsonl").read_text())["metadata"]["scenario"]["goal"] == REFUND

    (folder / "bad.jsonl").write_text(json.dumps({"goal": REFUND, "facts": [""]}) + "\n")
    bad = run_vera(folder, *args, "--scenarios", "bad.jsonl", "-o", "x.jsonl", OPENAI_API_KEY=KEY)
    assert bad.returncode == 2
    assert "bad.jsonl: line 1, field 'facts'" in bad.stderr
    missing = run_vera(folder, *args[:-2], "-o", "x.jsonl", OPENAI_API_KEY=KEY)
    assert missing.returncode == 2 and "--conversations needs --assistant" in missing.stderr


class _Refuse:
    """`loopback.default` for a dry run: any request that arrives is recorded (the test then
    fails on it) and refused."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, request: Recorded) -> Reply:
        self.paths.append(request.path)
        return error(500)


TO_THE_LIMIT = {
    REFUND: [say("How is an annual plan refunded?"), say("Is it pro-rated?")],
    SEATS: [say("What does an extra seat cost?"), say("And how do I add one?")],
}


def test_the_dry_run_calls_nothing_and_bounds_a_run_to_the_turn_limit(
    loopback: LoopbackServer, docs: Path
) -> None:
    refuse = _Refuse()
    loopback.default = refuse
    scenarios = [Scenario(id="refund", goal=REFUND), Scenario(id="seats", goal=SEATS)]
    settings = Settings(judge=JUDGE, judge_base_url=loopback.openai_url)
    price = Price(input=1.0, output=2.0)
    estimate = estimate_simulation(
        scenarios,
        SIMULATOR,
        documents_dir=docs,
        turns=2,
        settings=settings,
        prices=PriceTable({SIMULATOR: price}),
    )
    assert refuse.paths == [] and loopback.request_count == 0

    assert (estimate.scenarios, estimate.turns, estimate.scenario_calls) == (2, 2, 0)
    assert estimate.judge == JUDGE
    assert estimate.least_calls == 2
    spent = Usage(
        prompt_tokens=estimate.prompt_tokens, completion_tokens=estimate.completion_tokens
    )
    assert estimate.cost_usd == pytest.approx(price.cost(spent))  # judge and user: one model

    # The same simulation, run: every conversation goes to the turn limit, the bound the
    # estimate gives, so it makes exactly the calls the estimate counts.
    user = SimulatedUser(TO_THE_LIMIT)
    loopback.default = user
    result = _run(loopback, docs, scenarios, turns=2)
    assert result.stops == {"turn_limit": 2}
    assert len(user.asked) == estimate.simulator_calls == 2 * (2 + 1)
    judged = loopback.request_count - len(user.asked)
    assert judged == estimate.judge_calls  # each turn's check: one extraction, one verification
    assert loopback.request_count == estimate.calls


def test_the_dry_run_counts_the_calls_that_write_scenarios(
    loopback: LoopbackServer, docs: Path
) -> None:
    loopback.default = _Refuse()
    offline = Settings(judge="offline")
    estimate = estimate_simulation(12, SIMULATOR, documents_dir=docs, turns=3, settings=offline)
    assert loopback.request_count == 0
    assert (estimate.scenarios, estimate.scenario_calls) == (12, 2)  # ten a call
    assert estimate.simulator_calls == 12 * 4
    assert estimate.judge_calls == 0, "the offline judge calls no model"
    assert estimate.cost_usd is None, "no price is known for the loopback model"
    assert estimate.calls == 2 + 48 and estimate.least_calls == 2 + 12
    more = estimate_simulation(12, SIMULATOR, documents_dir=docs, turns=4, settings=offline)
    assert more.prompt_tokens > estimate.prompt_tokens  # a longer conversation sends more
    with pytest.raises(ValueError, match="turns must be at least 1"):
        estimate_simulation(2, SIMULATOR, documents_dir=docs, turns=0)


def test_the_cli_dry_run_reads_yaml_scenarios_and_calls_nothing(
    loopback: LoopbackServer, docs: Path
) -> None:
    refuse = _Refuse()
    loopback.default = refuse
    folder = docs.parent
    (folder / "s.yaml").write_text(
        f"- id: refund\n  goal: {REFUND}\n- id: seats\n  goal: {SEATS}\n  facts: [{FACT}]\n"
    )
    # No --assistant and no -o: the dry run neither loads nor runs the assistant.
    args = ["generate", "--conversations", "--documents", str(docs), "--generator", SIMULATOR]
    args += ["--judge", JUDGE, "--judge-base-url", loopback.openai_url, "--turns", "3"]
    dry = run_vera(folder, *args, "--scenarios", "s.yaml", "--dry-run", OPENAI_API_KEY=KEY)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    line = " ".join(dry.stdout.split())  # however the line wraps
    assert "Dry run · 2 scenarios of up to 3 user turns · at most 8 simulated-user and" in line
    assert "Your assistant's own calls are not counted" in line and "No call was made." in line
    assert refuse.paths == [] and loopback.request_count == 0

    (folder / "bad.yaml").write_text(f"- goal: {REFUND}\n\n- goal: {SEATS}\n  facts: ACME-17\n")
    bad = run_vera(folder, *args, "--scenarios", "bad.yaml", "--dry-run", OPENAI_API_KEY=KEY)
    assert bad.returncode == 2
    assert "bad.yaml: scenario 2 (line 4), field 'facts': expected a list" in bad.stderr
    assert loopback.request_count == 0
