"""Conversations as threads wherever a run shows: the HTML report (so `vera report` and
`vera view`) and `vera conversations --html` render one partial, every message in order (user,
assistant, tool, system) with each assistant turn's claims, verdicts and sources under it;
every text from the data escaped; a run of many conversations bounded."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from markupsafe import escape
from starlette.testclient import TestClient

import vera
from vera import Conversation, Turn, create_app, evaluate_conversations
from vera._conversations import thread_lines, threads_html
from vera._types import ConversationTurns
from vera._viewer import conversation_url, run_url
from vera.datasets._conversations import read_conversations, turn_samples
from vera.render import render_html
from vera.render._html import csp_hash, read_samples
from vera.render._markdown import render_markdown

WHITEBOX = "the conversations' own parts; the viewer's own parts"

CHAT: dict[str, Any] = {
    "id": "order-42",
    "messages": [
        {"role": "system", "content": "You are a support agent for ShipCo."},
        {"role": "user", "content": "Where is order 42? I live in Berlin."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "track_order", "arguments": '{"order": 42}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_7", "content": "Order 42 shipped on May 3 via DHL."},
        {
            "role": "assistant",
            "content": "Order 42 shipped on May 3 via DHL.",
            "contexts": ["DHL delivers within 5 days in Germany."],
        },
        {"role": "user", "content": "Which carrier again?"},
        {"role": "assistant", "content": "Order 42 shipped on May 9 via UPS."},
    ],
}

HOSTILE: dict[str, Any] = {
    "id": '"><img src=x onerror=alert(1)>',
    "messages": [
        {"role": "system", "content": "<script>alert('system')</script>"},
        {"role": "user", "content": "What does <script>alert('user')</script> cost?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": '"x" onclick="y',
                    "function": {"name": "<b>price</b>", "arguments": "<i>{}</i>"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": '"x" onclick="y',
            "content": "Pro costs 20 dollars. <script>alert('tool')</script>",
        },
        {
            "role": "assistant",
            "content": "Pro costs 20 dollars. <img src=y onerror=alert('answer')>",
            "contexts": ["<iframe src='https://evil.example'></iframe> Pro: 20 dollars."],
        },
    ],
}


def _file(tmp_path: Path, *rows: dict[str, Any]) -> Path:
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _report_page(tmp_path: Path, *rows: dict[str, Any]) -> str:
    out = tmp_path / "report.html"
    vera.run_evaluation(_file(tmp_path, *rows), history=False, reports={"html": out})
    return out.read_text(encoding="utf-8")


def _thread(page: str, conversation: str) -> str:
    """The thread of `conversation`: its <details> up to the next thread or the section end."""
    start = page.index(f'id="thread-{conversation}"')
    ends = [page.find(mark, start) for mark in ('<details class="thread', "</section>", "</body>")]
    return page[start : min(e for e in ends if e > 0)]


def _roles(thread: str) -> list[str]:
    return re.findall(r'data-role-name="([a-z]+)"', thread)


def _turn(thread: str, number: int) -> str:
    start = thread.rindex('<li class="msg', 0, thread.index(f'data-turn="{number}"'))
    end = thread.find('<li class="msg', start + 1)
    return thread[start : end if end > 0 else len(thread)]


def test_the_report_shows_every_message_in_order_with_the_verdicts_under_each_turn(
    tmp_path: Path,
) -> None:
    thread = _thread(_report_page(tmp_path, CHAT), "order-42")
    assert _roles(thread) == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip
    assert "Where is order 42? I live in Berlin." in _turn(thread, 2)
    calls = _turn(thread, 3)
    assert '<span class="tool-name mono" dir="auto">track_order</span>' in calls
    assert "call_7" in calls and "{&#34;order&#34;: 42}" in calls
    tool = _turn(thread, 4)
    assert 'data-role="tool-result"' in tool
    assert '<span class="tool-name mono" dir="auto">track_order</span>' in tool
    assert '<span class="call-id mono small muted" dir="auto" title="call id">call_7</span>' in tool
    assert "Order 42 shipped on May 3 via DHL." in tool
    faithful = _turn(thread, 5)
    assert '<span class="badge pass" data-role="flag">' in faithful
    assert '<span class="verdict v-fully">' in faithful
    # The verdict names the source it rests on: the tool's result, with the tool and turn.
    assert 'data-kind="tool" dir="auto">tool track_order, turn 4</span>' in faithful
    assert '<details class="turn-contexts">' in faithful
    assert "DHL delivers within 5 days in Germany." in faithful
    assert 'href="#id=order-42%2Fturn-5"' in faithful
    unfaithful = _turn(thread, 7)
    assert '<li class="msg role-assistant flagged"' in unfaithful
    assert 'data-role="first-unfaithful"' in unfaithful
    assert '<span class="verdict v-contradicted">' in unfaithful
    assert "faithfulness 0.000" in unfaithful
    assert thread.count('data-role="first-unfaithful"') == 1
    assert thread.count('data-role="verdicts"') == 2


def test_every_text_from_the_data_is_escaped_in_the_report(tmp_path: Path) -> None:
    page = _report_page(tmp_path, HOSTILE)
    for raw in (
        "<script>alert(",
        "<img src=x",
        "<img src=y",
        "<iframe",
        "<b>price</b>",
        "<i>{}</i>",
        'onclick="y',
    ):
        assert raw not in page, raw
    for escaped in (
        "&lt;script&gt;alert(&#39;system&#39;)&lt;/script&gt;",
        "&lt;script&gt;alert(&#39;user&#39;)&lt;/script&gt;",
        "&lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;",
        "&lt;b&gt;price&lt;/b&gt;",
        "&lt;iframe src=",
        "&#34;x&#34; onclick=&#34;y",
    ):
        assert escaped in page, escaped
    assert page.count('<details class="thread') == 1
    assert 'id="thread-&#34;&gt;&lt;img src=x onerror=alert(1)&gt;"' in page


def test_vera_conversations_html_escapes_messages_and_tool_results(tmp_path: Path) -> None:
    page = threads_html(evaluate_conversations(_file(tmp_path, HOSTILE)))
    # Its policy allows its own style alone, by hash: no script or image would run or load.
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    [style] = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    allowed = html.unescape(policy.group(1))
    assert f"style-src {csp_hash(style)};" in allowed
    assert "script-src 'none'" in allowed and "img-src 'none'" in allowed
    assert "<script>alert(" not in page and "<img src=" not in page and "<iframe" not in page
    assert "&lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;" in page
    assert "&lt;b&gt;price&lt;/b&gt;" in page


def test_a_long_tool_result_shows_collapsed(tmp_path: Path) -> None:
    chat = json.loads(json.dumps(CHAT))
    chat["messages"][3]["content"] = "Order 42 shipped on May 3 via DHL. " + "x" * 2000
    thread = _thread(_report_page(tmp_path, chat), "order-42")
    tool = _turn(thread, 4)
    assert '<details class="long-text"><summary>tool result (2,035 characters)</summary>' in tool
    assert '<details class="long-text">' not in _turn(thread, 5)


def test_without_the_conversation_the_thread_shows_what_the_turn_samples_hold() -> None:
    # An in-memory run: the report has the turn samples, not the conversation's messages; their
    # contexts are the user's words and the tool results, each tagged with its turn.
    [conversation] = read_conversations([CHAT])
    samples = turn_samples(conversation)
    report = vera.evaluate(samples)
    page = render_html(report, samples={s.id: s for s in samples})
    thread = _thread(page, "order-42")
    assert 'data-role="thread-note"' in thread and "system messages and tool calls" in thread
    assert _roles(thread) == ["user", "tool", "assistant", "user", "assistant"]
    assert re.findall(r'data-turn="(\d+)"', thread) == ["2", "4", "5", "6", "7"]
    tool = _turn(thread, 4)
    assert '<span class="tool-name mono" dir="auto">track_order</span>' in tool
    assert "call_7" in tool
    assert "DHL delivers within 5 days in Germany." in _turn(thread, 5)
    assert thread.count('data-role="verdicts"') == 2
    full = render_html(
        report, samples={s.id: s for s in samples}, conversations={"order-42": conversation}
    )
    assert 'data-role="thread-note"' not in _thread(full, "order-42")


def test_without_the_users_words_each_turn_shows_the_question_it_answered() -> None:
    [conversation] = read_conversations([CHAT])
    samples = turn_samples(conversation, user_facts=False)
    page = render_html(vera.evaluate(samples), samples={s.id: s for s in samples})
    thread = _thread(page, "order-42")
    assert _roles(thread) == ["tool", "user", "assistant", "user", "assistant"]
    assert thread.count('title="its turn number is not known"') == 2
    assert "Which carrier again?" in thread


def test_a_conversation_changed_since_the_run_is_not_shown_beside_its_verdicts() -> None:
    [conversation] = read_conversations([CHAT])
    report = vera.evaluate(turn_samples(conversation))
    edited = conversation.model_copy(
        update={"turns": (*conversation.turns[:-1], Turn(role="assistant", content="Cancelled."))}
    )
    thread = _thread(render_html(report, conversations={"order-42": edited}), "order-42")
    assert "Cancelled." not in thread
    assert 'data-role="thread-note"' in thread and "changed since the run" in thread


def _small(number: int, faithful: bool) -> Conversation:
    answer = "Pro costs 20 dollars." if faithful else "Pro costs 90 dollars."
    return Conversation(
        id=f"c{number:03}",
        turns=(
            Turn(role="user", content="What does Pro cost?"),
            Turn(role="assistant", content=answer, contexts=("Pro costs 20 dollars.",)),
        ),
    )


def test_a_run_of_many_conversations_shows_only_the_worst_threads() -> None:
    conversations = [_small(i, faithful=i % 20 != 7) for i in range(60)]
    report = vera.evaluate([s for c in conversations for s in turn_samples(c)])
    page = render_html(report, conversations={c.id: c for c in conversations})
    assert page.count('<details class="thread') == 50
    assert 'id="thread-cap"' in page and "The 50 worst conversations of 60" in page
    # The three unfaithful ones come first, open.
    threads = re.findall(r'<details class="thread([^"]*)" id="thread-(c\d+)"[^>]*?( open)?>', page)
    assert [(t[0], t[1]) for t in threads[:3]] == [
        (" flagged", "c007"),
        (" flagged", "c027"),
        (" flagged", "c047"),
    ]
    assert all(t[0] == "" for t in threads[3:])
    assert 'id="conversation-cap"' not in page


def test_the_conversation_table_is_bounded_too() -> None:
    report = vera.evaluate(turn_samples(_small(0, faithful=False)))
    block = report.conversations
    assert block is not None
    many = tuple(
        ConversationTurns(
            id=f"x{i}",
            turns=(2,),
            scored_turns=1,
            unfaithful_turns=(),
            faithful_turns=1.0,
            first_unfaithful_turn=None,
        )
        for i in range(600)
    )
    bigger = report.model_copy(
        update={"conversations": block.model_copy(update={"conversations": many})}
    )
    page = render_html(bigger)
    assert page.count("<tr data-conversation=") == 500
    assert 'id="conversation-cap"' in page and "500 worst conversations of 600" in page
    assert page.count('<details class="thread') == 50


def test_vera_view_shows_a_stored_runs_threads(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    result = vera.run_evaluation(_file(tmp_path, CHAT), history=history)
    assert result.run_id is not None
    with TestClient(create_app(history)) as client:
        page = client.get(run_url(result.run_id)).text
    thread = _thread(page, "order-42")
    assert _roles(thread) == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip
    assert '<span class="tool-name mono" dir="auto">track_order</span>' in _turn(thread, 4)
    assert 'data-role="first-unfaithful"' in _turn(thread, 7)


def test_vera_conversations_html_is_the_same_thread_with_consistency_marked(
    tmp_path: Path,
) -> None:
    report = evaluate_conversations(_file(tmp_path, CHAT))
    page = threads_html(report)
    thread = _thread(page, "order-42")
    assert _roles(thread) == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip
    last = _turn(thread, 7)
    assert 'data-role="first-unfaithful"' in last
    # Turn 7 contradicts what the assistant said in turn 5, and is marked for it.
    assert 'data-role="inconsistent"' in last
    assert "contradicts an earlier assistant turn</span>" in last
    assert "consistency" in thread
    # One partial: the report's verdict badges and source labels.
    assert 'data-kind="tool" dir="auto">tool track_order, turn 4</span>' in _turn(thread, 5)


def test_the_console_thread_names_calls_and_results_and_marks_the_first_unfaithful_turn(
    tmp_path: Path,
) -> None:
    seen = {
        "id": "deepeval",
        "turns": [
            {"role": "user", "content": "What does Pro cost?"},
            {
                "role": "assistant",
                "content": "Pro costs 20 dollars.",
                "tools_called": [{"name": "price", "output": "Pro: 20 dollars."}],
            },
        ],
    }
    report = evaluate_conversations(_file(tmp_path, CHAT, seen))
    chat, deepeval = (list(thread_lines(c)) for c in report.conversations)
    assert "   3 assistant → calls track_order (call_7)" in chat
    assert "   4 tool track_order (call_7): Order 42 shipped on May 3 via DHL." in chat
    assert "       (1 retrieved context(s))" in chat
    marked = [line for line in chat if "first unfaithful turn" in line and "└" in line]
    assert marked == ["       └ UNFAITHFUL (faithfulness 0.00) · first unfaithful turn"]
    assert chat[chat.index(marked[0]) - 1] == "   7 assistant: Order 42 shipped on May 9 via UPS."
    # A tool result held on the assistant turn itself shows under it.
    assert "       ↳ tool price: Pro: 20 dollars." in deepeval


def test_vera_view_shows_the_messages_of_a_stored_vera_conversations_run(tmp_path: Path) -> None:
    # `vera conversations` runs its turns from memory: the view reads the file it names.
    history = tmp_path / "runs.sqlite"
    stored = evaluate_conversations(_file(tmp_path, CHAT), history=history)
    replayed = evaluate_conversations(
        _file(tmp_path, CHAT),
        history=history,
        assistant=lambda turns: Turn(role="assistant", content="Order 42 is lost."),
    )
    assert stored.run_id is not None and replayed.run_id is not None
    with TestClient(create_app(history)) as client:
        page = client.get(run_url(stored.run_id)).text
        other = client.get(run_url(replayed.run_id)).text
    thread = _thread(page, "order-42")
    assert 'data-role="thread-note"' not in thread
    assert _roles(thread) == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip
    # A replay's answers are not the file's: its thread is not shown from the file.
    replay = _thread(other, "order-42")
    assert 'data-role="thread-note"' in replay
    assert "Order 42 is lost." in replay and "May 9 via UPS" not in replay


AGENT: dict[str, Any] = {
    "id": "agent",
    "messages": [
        {"role": "user", "content": "When does order 42 arrive?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "a", "function": {"name": "track"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "Order 42 left the depot on May 3."},
        {
            "role": "assistant",
            "content": "Order 42 left the depot on May 3.",
            "metadata": {"intermediate": True},
            "tool_calls": [{"id": "b", "function": {"name": "eta"}}],
        },
        {"role": "tool", "tool_call_id": "b", "content": "Order 42 arrives on May 5."},
        {"role": "assistant", "content": "Order 42 arrives on May 5."},
    ],
}


def test_the_report_reads_the_turns_back_with_the_runs_agent_steps(tmp_path: Path) -> None:
    # With --agent-steps the intermediate message is a turn of its own, and the final answer's
    # contexts are in another order: the report must read the data back the way the run did,
    # or a verdict would name another tool's result as its source.
    out = tmp_path / "report.html"
    result = vera.run_evaluation(
        _file(tmp_path, AGENT), history=False, agent_steps=True, reports={"html": out}
    )
    block = result.report.conversations
    assert block is not None and block.conversations[0].turns == (4, 6)
    thread = _thread(out.read_text(encoding="utf-8"), "agent")
    assert "tool eta, turn 5</span>" in _turn(thread, 6)
    assert "tool track, turn 3</span>" in _turn(thread, 4)
    page = read_samples(out.read_text(encoding="utf-8"))
    assert len(page["details"]) == 2 and all("q" in d for d in page["details"])


@pytest.mark.slow
def test_vera_view_has_a_page_for_every_conversation_beyond_the_worst(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"c{i:03}",
            "messages": [
                {"role": "user", "content": "What does Pro cost?"},
                {"role": "tool", "content": "Pro costs 20 dollars.", "name": "price"},
                {"role": "assistant", "content": "Pro costs 20 dollars."},
            ],
        }
        for i in range(55)
    ]
    history = tmp_path / "runs.sqlite"
    result = vera.run_evaluation(_file(tmp_path, *rows, HOSTILE), history=history)
    assert result.run_id is not None
    run = result.run_id
    with TestClient(create_app(history)) as client:
        page = client.get(run_url(run)).text
        assert page.count('<details class="thread') == 50
        # The table links a thread on the page, or the conversation's own page.
        hostile = quote(HOSTILE["id"], safe="")
        assert f'<a href="#thread-{escape(HOSTILE["id"])}"' in page
        assert f'<a href="{conversation_url(run, "c054")}" dir="auto">c054</a>' in page
        alone = client.get(conversation_url(run, "c054"))
        missing = client.get(conversation_url(run, "nope"))
        odd = client.get(conversation_url(run, HOSTILE["id"]))
    assert alone.status_code == 200
    assert "default-src 'none'" in alone.headers["content-security-policy"]
    thread = _thread(alone.text, "c054")
    assert _roles(thread) == ["user", "tool", "assistant"]
    assert '<span class="tool-name mono" dir="auto">price</span>' in thread
    assert f'href="{run_url(run, "c054/turn-3")}"' in thread
    assert missing.status_code == 404 and "has no conversation &#39;nope&#39;" in missing.text
    assert odd.status_code == 200 and "<script>alert(" not in odd.text
    assert "&lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;" in odd.text
    assert hostile in conversation_url(run, HOSTILE["id"])


def test_the_markdown_summary_names_each_first_unfaithful_turn() -> None:
    # A pull-request comment says what the console says of the conversations.
    [conversation] = read_conversations([CHAT])
    text = render_markdown(vera.evaluate(turn_samples(conversation)))
    assert "- Conversations: 1, faithful turns 0.500 (the answer verdict: no claim" in text
    assert "- Consistency 0.000 (claims that contradict no earlier assistant turn" in text
    assert "- First unfaithful turn: order-42 turn 7" in text
    assert "Conversations:" not in render_markdown(vera.evaluate("example"))


def _teams(tmp_path: Path) -> Path:
    """CHAT twice, in two teams; the second team's name is markup, which must stay text."""
    return _file(
        tmp_path,
        {**CHAT, "metadata": {"team": "billing"}},
        {**CHAT, "id": "order-43", "metadata": {"team": "<b>ops</b>"}},
    )


def test_the_report_shows_consistency_and_marks_the_turn_that_contradicts(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = vera.run_evaluation(
        _teams(tmp_path), history=False, reports={"html": out}, group_by=["team"]
    )
    block = result.report.conversations
    assert block is not None and block.consistency == 0.0 and block.checked_claims == 2
    page = out.read_text(encoding="utf-8")
    figures = page[page.index('id="conversation-figures"') : page.index('id="conversation-table"')]
    assert "Faithful turns <strong>0.500</strong> of 4 scored turns" in figures
    assert "consistency <strong>0.000</strong> over 2 checked claims" in figures
    row = page[page.index('<tr data-conversation="order-42">') :]
    row = row[: row.index("</tr>")]
    assert '<td class="num">0.000 (1)</td>' in row
    assert '<td class="num bad" data-role="inconsistent-turns">7</td>' in row
    thread = _thread(page, "order-42")
    assert "· consistency 0.000 of 1 checked claim</span>" in thread
    # Only the turn that contradicts turn 5 is marked, with the claim that does (the block
    # keeps the consistency check's claims), so no note sends the reader elsewhere.
    [claim] = block.conversations[1].inconsistent_claims
    assert (claim.turn, block.conversations[1].inconsistent_turns) == (7, (7,))
    assert 'data-role="inconsistent"' in _turn(thread, 7)
    assert 'data-role="inconsistent-note"' not in _turn(thread, 7)
    assert f"{html.escape(claim.text, quote=False)}</span>" in _turn(thread, 7)
    assert "contradicts an earlier assistant turn</span></li>" in _turn(thread, 7)
    assert 'data-role="inconsistent"' not in _turn(thread, 5)
    assert thread.count('data-role="inconsistent"') == 1


def test_the_report_has_a_table_of_conversations_by_the_group_by_field(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    vera.run_evaluation(_teams(tmp_path), history=False, reports={"html": out}, group_by=["team"])
    page = out.read_text(encoding="utf-8")
    start = page.index('<table class="metrics" data-conversation-groups="team">')
    table = page[start : page.index("</table>", start)]
    assert 'Conversations by <span dir="auto">team</span></h3>' in page
    assert re.findall(r'<tr data-group="([^"]*)">', table) == ["&lt;b&gt;ops&lt;/b&gt;", "billing"]
    assert '<th scope="row" dir="auto">&lt;b&gt;ops&lt;/b&gt;</th>' in table
    assert "<b>ops</b>" not in page
    billing = table[table.index('data-group="billing"') :]
    cells = re.findall(r'<td class="num">(.*?)</td>', billing[: billing.index("</tr>")])
    assert cells == [
        "1",
        '0.500 <span class="small muted">of 2 scored</span>',
        '0.000 <span class="small muted">of 1 checked</span>',
    ]


def test_a_run_without_a_consistency_check_says_so_rather_than_show_a_score() -> None:
    report = vera.evaluate(turn_samples(_small(0, faithful=True)))
    assert report.conversations is not None and report.conversations.consistency is None
    page = render_html(report)
    assert "consistency <strong>—</strong> (no claim checked against an earlier turn)" in page
    # No column of n/a in a table that may list 500 conversations: the line above says it.
    assert "Inconsistent turns" not in page and 'data-role="inconsistent-turns"' not in page
    thread = _thread(page, "c000")
    assert "· consistency n/a (no claim checked against an earlier turn)</span>" in thread
    assert "data-conversation-groups" not in page


def test_vera_view_shows_consistency_on_the_run_and_the_conversation_page(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    result = vera.run_evaluation(_teams(tmp_path), history=history, group_by=["team"])
    assert result.run_id is not None
    with TestClient(create_app(history)) as client:
        run_page = client.get(run_url(result.run_id)).text
        alone = client.get(conversation_url(result.run_id, "order-42")).text
    assert "consistency <strong>0.000</strong> over 2 checked claims" in run_page
    assert '<table class="metrics" data-conversation-groups="team">' in run_page
    assert '<td class="num bad" data-role="inconsistent-turns">7</td>' in run_page
    for page in (run_page, alone):
        thread = _thread(page, "order-42")
        assert "· consistency 0.000 of 1 checked claim</span>" in thread
        assert 'data-role="inconsistent"' in _turn(thread, 7)
        assert 'data-role="inconsistent"' not in _turn(thread, 5)


@pytest.mark.slow
def test_each_claim_in_the_sample_list_carries_the_source_its_verdict_rests_on(
    tmp_path: Path,
) -> None:
    page = read_samples(_report_page(tmp_path, CHAT))
    sources = {page["rows"][d["row"]][0]: [c.get("src") for c in d["c"]] for d in page["details"]}
    assert sources == {
        "order-42/turn-5": ["tool track_order, turn 4"],
        "order-42/turn-7": ["earlier-turn track_order, turn 4"],
    }
    # A claim whose context has no source carries none, and the packed claim has no key.
    plain = vera.evaluate([vera.Sample(id="s", query="q?", response="Pro costs 20 dollars.",
                                       contexts=["Pro costs 20 dollars."])])  # fmt: skip
    [detail] = read_samples(render_html(plain))["details"]
    assert [c.get("src", "absent") for c in detail["c"]] == ["absent"]
