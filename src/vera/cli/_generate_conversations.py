"""`vera generate --conversations`: conversation test sets from a simulated user talking to the
user's assistant (the flags, and the run behind them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.markup import escape

from vera import ConfigError, ExitCode, Settings, VeraError
from vera.cli._app import _fail, out
from vera.render._outputs import check_output_paths

ConversationsFlag = Annotated[
    bool,
    typer.Option(
        "--conversations",
        help="Write conversations instead of items: --generator plays a user with each "
        "scenario's goal and persona, talking to --assistant; every user turn is checked "
        "against --documents and the scenario. Output: JSONL in VERA's conversation format.",
    ),
]
SimAssistantFlag = Annotated[
    str | None,
    typer.Option(
        "--assistant",
        help="With --conversations: your system, module:function (as in vera conversations "
        "--assistant): the history in, the next turn out; plain or async, or a vera Pipeline.",
    ),
]
ScenariosFlag = Annotated[
    Path | None,
    typer.Option(
        "--scenarios",
        help="With --conversations: JSONL, one scenario a line, or YAML (.yaml, .yml), a list "
        "of them: goal, and optionally id, persona, facts (a list of what the user knows, e.g. "
        "its account id). Without it, "
        "--generator writes --n scenarios from --documents (passages drawn by --seed).",
    ),
]
TurnsFlag = Annotated[
    int,
    typer.Option("--turns", min=1, help="With --conversations: at most this many user turns."),
]


def simulate(
    documents: Path,
    generator: str,
    *,
    assistant: str | None,
    scenarios: Path | None,
    turns: int,
    n: int,
    seed: int,
    output: Path | None,
    dry_run: bool,
    settings: Settings,
    base_url: str | None,
) -> NoReturn:
    """Run the simulation, print its summary, write the conversations and exit: 0 when some
    were written, 3 when none was or the budget stopped it, 2 for bad input. `dry_run`: the
    estimate printed, exit 0; nothing is called, and the assistant is neither loaded nor run."""
    # Imported here: the assistant's loader and the simulator load only for this mode.
    from vera import load_assistant, read_scenarios, simulate_conversations

    try:
        wanted = read_scenarios(scenarios) if scenarios is not None else n
        if dry_run:
            _dry_run(wanted, generator, documents, turns=turns, seed=seed, settings=settings)
        if assistant is None:
            raise ConfigError("--conversations needs --assistant module:function (your system)")
        if output is None:
            raise ConfigError("give -o PATH for the simulated conversations (JSONL)")
        check_output_paths([output])
        result = simulate_conversations(
            wanted,
            load_assistant(assistant),
            generator,
            documents_dir=documents,
            turns=turns,
            settings=settings,
            simulator_base_url=base_url,
            seed=seed,
        )
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _finish(result, output)


def _dry_run(
    scenarios: Any, generator: str, documents: Path, *, turns: int, seed: int, settings: Settings
) -> NoReturn:
    """What the simulation would cost at most, printed; no call is made."""
    from vera import estimate_simulation
    from vera._conversations import simulation_estimate_line

    estimate = estimate_simulation(
        scenarios, generator, documents_dir=documents, turns=turns, settings=settings, seed=seed
    )
    out.print(simulation_estimate_line(estimate), highlight=False, markup=False)
    raise typer.Exit(ExitCode.OK)


def _finish(result: Any, output: Path) -> NoReturn:
    from vera import write_conversations
    from vera._conversations import simulation_lines

    for line in simulation_lines(result):
        out.print(line, highlight=False, markup=False)
    if result.conversations:
        try:
            write_conversations(result, output)
        except VeraError as exc:
            _fail(exc)
        out.print(f"Conversations written to {escape(str(output))}", highlight=False)
    raise typer.Exit(
        ExitCode.OK if result.conversations and not result.stopped else ExitCode.INCOMPLETE
    )
