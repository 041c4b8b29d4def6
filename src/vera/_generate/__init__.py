"""`vera generate`: test sets written from the user's documents, every item checked.

result = generate_testset("docs/", "openai:gpt-4o-mini", n=50, seed=1)
Path("generated.json").write_text(json.dumps(result.dataset, indent=2))
"""

from __future__ import annotations

from vera._generate._checks import (
    DEFAULT_MAX_ANSWER_CHARS,
    DEFAULT_MAX_QUOTE_CHARS,
    REASONS,
    Draft,
    answer_supported,
    is_near_duplicate,
    missing_quote,
    normalise,
    read_draft,
)
from vera._generate._core import GenerationResult, generate_testset
from vera._generate._estimate import GenerationEstimate, estimate_testset
from vera._generate._selection import CATEGORIES, DEFAULT_MIX, allocate, parse_mix, plan_tasks
from vera._generate._summary import estimate_line, summary_lines, write_dataset

__all__ = [
    "CATEGORIES",
    "DEFAULT_MAX_ANSWER_CHARS",
    "DEFAULT_MAX_QUOTE_CHARS",
    "DEFAULT_MIX",
    "REASONS",
    "Draft",
    "GenerationEstimate",
    "GenerationResult",
    "allocate",
    "answer_supported",
    "estimate_line",
    "estimate_testset",
    "generate_testset",
    "is_near_duplicate",
    "missing_quote",
    "normalise",
    "parse_mix",
    "plan_tasks",
    "read_draft",
    "summary_lines",
    "write_dataset",
]
