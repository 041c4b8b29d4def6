"""`vera conversations`: conversations verified turn by turn, shown as threads, with gates on
the faithful-turn share and on consistency."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vera import (
    ConfigError,
    ConversationReport,
    ExitCode,
    VeraError,
    estimate_conversations,
    evaluate_conversations,
    load_settings,
)
from vera._conversations import baseline_lines, thread_lines, threads_html
from vera.cli._app import _fail, app, err, out
from vera.render import atomic_text
from vera.render._outputs import output_format, report_format

if TYPE_CHECKING:
    from vera._conversations import ConversationEstimate

HELP = (
    "Verify conversations turn by turn and show each as a thread.\n\n"
    "Example: vera conversations conversations --min-faithful-turns 0.9 -o turns.json"
)


_DataArg = Annotated[
    str, typer.Argument(help="A JSON/JSONL file of conversations, or a bundled name.")
]
_JudgeArg = Annotated[str | None, typer.Option("--judge", help="The judge (default offline).")]
_UserFactsArg = Annotated[
    bool | None,
    typer.Option(
        "--user-facts/--no-user-facts",
        help="Whether what the user said counts as evidence (default: it does, and each "
        "claim resting on it is shown as 'user'; user_facts in vera.toml).",
        show_default=False,
    ),
]
_MinFaithfulTurnsArg = Annotated[
    float | None,
    typer.Option(min=0.0, max=1.0, help="Exit 1 when the share of faithful turns is lower."),
]
_MinConsistencyArg = Annotated[
    float | None,
    typer.Option(min=0.0, max=1.0, help="Exit 1 when a conversation's consistency is lower."),
]
_DryRunArg = Annotated[
    bool,
    typer.Option("--dry-run", help="Count the judge calls both runs would make; call nothing."),
]
_OutputArg = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="Write the turns here: HTML for a .html path, else JSON."),
]
_AgentStepsArg = Annotated[
    bool | None,
    typer.Option(
        "--agent-steps/--final-answers",
        help="Agent traces: verify intermediate assistant messages too (default: final "
        "answers only; agent_steps in vera.toml).",
        show_default=False,
    ),
]
_NoHistoryArg = Annotated[
    bool,
    typer.Option("--no-history", help="Do not store the turn run in the run history (vera runs)."),
]


_AssistantArg = Annotated[
    str | None,
    typer.Option(
        "--assistant",
        help="Replay each conversation through your system, module:function: called at each "
        "user turn with the history (a sequence of vera.Turn), it returns the next turn (a "
        "Turn with its contexts, or its text); a vera Pipeline gets the history in "
        "state.data['history']. Its answers are verified in place of the recorded ones.",
    ),
]


_BaselineArg = Annotated[
    list[str] | None,
    typer.Option(
        "--baseline",
        help="Compare with a baseline replaying the same conversations (repeatable): a "
        "bundled one (naive-rag, simple-verification, vera; built over what the "
        "conversations retrieved and their tools returned) or module:function, as "
        "--assistant. Each is verified like the system and compared turn by turn.",
    ),
]


def conversations_command(
    data: _DataArg,
    judge: _JudgeArg = None,
    user_facts: _UserFactsArg = None,
    min_faithful_turns: _MinFaithfulTurnsArg = None,
    min_consistency: _MinConsistencyArg = None,
    dry_run: _DryRunArg = False,
    output: _OutputArg = None,
    agent_steps: _AgentStepsArg = None,
    no_history: _NoHistoryArg = False,
    assistant: _AssistantArg = None,
    baseline: _BaselineArg = None,
) -> None:
    try:
        # vera.toml and VERA_* apply as they do to `vera eval`; the turn run is stored the same.
        settings = load_settings()
        if output is not None:  # refused before any turn is judged, as `vera eval -o` is
            output_format(output, ("json", "html"), "vera conversations")
        if dry_run and assistant is not None:
            raise ConfigError(
                "--dry-run counts the judge calls of the recorded turns; --assistant would call "
                "your system to make new ones: drop one of the two"
            )
        if dry_run and baseline:
            raise ConfigError(
                "--dry-run counts the judge calls of the recorded turns; --baseline replays "
                "the conversations through a baseline, whose answers (and so its judge calls) "
                "exist only once it runs: drop one of the two"
            )
        if dry_run:
            estimate = estimate_conversations(
                data, judge=judge, user_facts=user_facts, agent_steps=agent_steps, settings=settings
            )
            _print_estimate(estimate)
            raise typer.Exit(ExitCode.OK)
        report = evaluate_conversations(
            data,
            judge=judge,
            user_facts=user_facts,
            agent_steps=agent_steps,
            settings=settings,
            history=not no_history,
            assistant=assistant,
            baselines=list(baseline or ()),
        )
    except VeraError as exc:
        _fail(exc)
    _show(report, output)
    code = _exit_code(report, min_faithful_turns, min_consistency)
    raise typer.Exit(max(code, _baselines_code(report)))


def _show(report: ConversationReport, output: Path | None) -> None:
    """The threads on the console, where the turn run is stored, and the file asked for."""
    for score in report.conversations:
        for line in thread_lines(score):
            out.print(line, markup=False, soft_wrap=True)
    if report.run_id is not None:
        out.print(
            f"Turn run stored as {report.run_id}: vera runs show {report.run_id}; "
            f"vera report {report.run_id} -o turns.html; vera view lists it",
            markup=False,
        )
    if output is not None:
        html = report_format(output) == "html"
        # Whole or not at all, as every report VERA writes.
        with atomic_text(output, what="the turns") as file:
            file.write(threads_html(report) if html else report.turns_json())


def _baselines_code(report: ConversationReport) -> int:
    """Each baseline's faithful turns, consistency and paired comparison; exit 3 when one
    measured less than asked (a failed replay, a turn not scored), naming it."""
    code = ExitCode.OK
    for found in report.baselines.values():
        for line in baseline_lines(found, len(report.turns.samples)):
            out.print(line, markup=False, soft_wrap=True)
        if found.incomplete is not None:
            err.print(f"{found.incomplete}: the run is incomplete", markup=False)
            code = ExitCode.INCOMPLETE
    return code


def _print_estimate(estimate: ConversationEstimate) -> None:
    check = estimate.consistency
    out.print(
        f"Dry run ({estimate.turns.judge}): {estimate.turns.samples} turns; consistency "
        f"check: {check.samples if check else 0} turns, {check.judge_calls if check else 0} "
        f"calls; {estimate.calls} calls in all",
        markup=False,
    )


def _exit_code(
    report: ConversationReport, min_faithful: float | None, min_consistency: float | None
) -> int:
    share = report.faithful_turns
    out.print(f"Faithful turns: {'n/a' if share is None else f'{share:.3f}'}", markup=False)
    unscored = sum(c.unscored_turns for c in report.conversations)
    if unscored:
        err.print(f"{unscored} turn(s) were not scored: the run is incomplete", markup=False)
        return ExitCode.INCOMPLETE
    failures = []
    if min_faithful is not None and (share is None or share < min_faithful):
        shown = "n/a" if share is None else f"{share:.3f}"
        failures.append(f"faithful turns {shown} < {min_faithful}")
    measured = [c for c in report.conversations if c.consistency is not None]
    if min_consistency is not None and not measured:
        # A gate over nothing measured is no pass: no conversation had two assistant turns.
        failures.append("consistency measured on no conversation (none has two assistant turns)")
    if min_consistency is not None:
        failures += [
            f"{c.id}: consistency {c.consistency:.3f} < {min_consistency}"
            for c in report.conversations
            if c.consistency is not None and c.consistency < min_consistency
        ]
    for failure in failures:
        err.print(f"gate failed: {failure}", markup=False)
    return ExitCode.GATE_FAILED if failures else ExitCode.OK


app.command("conversations", help=HELP)(conversations_command)
