"""`vera generate`: a test set written from documents."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape

from vera import ConfigError, ExitCode, Settings, VeraError, load_settings
from vera.cli._app import _fail, app, out
from vera.cli._eval_flags import (
    _CachePathFlag,
    _ConcurrencyFlag,
    _DryRunFlag,
    _GeneratorBaseUrlFlag,
    _JudgeBaseUrlFlag,
    _JudgeFlag,
    _MaxCostFlag,
    _NoCacheFlag,
    _PromptsDirFlag,
)
from vera.cli._generate_conversations import (
    ConversationsFlag,
    ScenariosFlag,
    SimAssistantFlag,
    TurnsFlag,
    simulate,
)
from vera.render._outputs import check_output_paths

if TYPE_CHECKING:
    from vera import GenerationResult


_MaxAnswerCharsFlag = Annotated[
    int | None,
    typer.Option(
        "--max-answer-chars",
        min=1,
        help="Reject items whose answer is longer, as too_long (default 2,000).",
    ),
]
_MaxQuoteCharsFlag = Annotated[
    int | None,
    typer.Option(
        "--max-quote-chars",
        min=1,
        help="Reject items with a longer quote, as too_long (default 1,000).",
    ),
]


_GeneratorFlag = Annotated[
    str,
    typer.Option(
        "--generator",
        help="PROVIDER:MODEL that writes the items, or extractive: offline, items taken "
        "from the documents' own sentences (no key; fact_single, fact_multiple, summary).",
    ),
]


@app.command("generate")
def generate_command(
    documents: Annotated[
        Path, typer.Option("--documents", help="Folder of .txt/.md files to write items from.")
    ],
    generator: _GeneratorFlag,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the dataset (JSON) here.")
    ] = None,
    n: Annotated[int, typer.Option("--n", min=1, help="Items to generate.")] = 100,
    mix: Annotated[
        str | None,
        typer.Option("--mix", help="Category shares, e.g. fact_single=0.5,unanswerable=0.1."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the chunks drawn.")] = 0,
    max_answer_chars: _MaxAnswerCharsFlag = None,
    max_quote_chars: _MaxQuoteCharsFlag = None,
    judge: _JudgeFlag = None,
    judge_base_url: _JudgeBaseUrlFlag = None,
    generator_base_url: _GeneratorBaseUrlFlag = None,
    prompts_dir: _PromptsDirFlag = None,
    no_cache: _NoCacheFlag = False,
    cache_path: _CachePathFlag = None,
    max_cost: _MaxCostFlag = None,
    concurrency: _ConcurrencyFlag = None,
    dry_run: _DryRunFlag = False,
    conversations: ConversationsFlag = False,
    assistant: SimAssistantFlag = None,
    scenarios: ScenariosFlag = None,
    turns: TurnsFlag = 3,
) -> None:
    """Write a test set from your documents; every item is checked before it is kept.

    Example: vera generate --documents docs/ --generator openai:gpt-4o-mini -o generated.json
    (offline, no key: --generator extractive)
    """
    from vera import generate_testset

    cli: dict[str, Any] = {"judge": judge, "judge_base_url": judge_base_url}
    cli |= {"judge_prompts_dir": prompts_dir, "cache_path": cache_path, "max_cost": max_cost}
    cli |= {"cache": False if no_cache else None, "concurrency": concurrency}
    if conversations:  # a simulated user talks to --assistant (vera.cli._generate_conversations)
        mode: dict[str, Any] = {"assistant": assistant, "scenarios": scenarios, "n": n}
        mode |= {"output": output, "dry_run": dry_run, "base_url": generator_base_url}
        mode |= {"turns": turns, "seed": seed}
        simulate(documents, generator, **mode, settings=_settings(cli))
    try:
        if output is None and not dry_run:
            raise ConfigError("give -o PATH for the generated dataset")
        check_output_paths([output] if output is not None else [])
        options: dict[str, Any] = {"n": n, "mix": mix, "seed": seed, "settings": load_settings(cli)}
        if dry_run:
            _dry_run(documents, generator, options)
        given = {"max_answer_chars": max_answer_chars, "max_quote_chars": max_quote_chars}
        options |= {name: value for name, value in given.items() if value is not None}
        result = generate_testset(
            documents, generator, generator_base_url=generator_base_url, **options
        )
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _finish_generate(result, output)


def _dry_run(documents: Path, generator: str, options: dict[str, Any]) -> NoReturn:
    """What generating would cost, printed; no call is made."""
    from vera import estimate_testset
    from vera._generate import estimate_line

    estimate = estimate_testset(documents, generator, **options)
    out.print(estimate_line(estimate), highlight=False, markup=False)
    raise typer.Exit(ExitCode.OK)


def _settings(cli: dict[str, Any]) -> Settings:
    try:
        return load_settings(cli)
    except (VeraError, ValueError) as exc:
        _fail(exc)


def _finish_generate(result: GenerationResult, output: Path | None) -> NoReturn:
    """Print what `vera generate` kept and turned away, write the dataset, and exit: 0 when
    something was kept, 3 when nothing was or the budget stopped it."""
    from vera import write_dataset
    from vera._generate import summary_lines

    for line in summary_lines(result):
        out.print(line, highlight=False, markup=False)
    if result.kept_total and output is not None:
        _save_dataset(write_dataset, result, output)
    raise typer.Exit(
        ExitCode.OK if result.kept_total and not result.stopped else ExitCode.INCOMPLETE
    )


def _save_dataset(write: Callable[[Any, Path], None], result: Any, output: Path) -> None:
    """`vera generate`'s dataset written (whole, or the old file kept); a failure is exit 2."""
    try:
        write(result, output)
    except VeraError as exc:
        _fail(exc)
    out.print(f"Dataset written to {escape(str(output))}", highlight=False)
