"""`vera generate`: test sets written from the user's documents, every item checked.

result = generate_testset("docs/", "openai:gpt-4o-mini", n=50, seed=1)
Path("generated.json").write_text(json.dumps(result.dataset, indent=2))
"""

from __future__ import annotations

from vera.generate.checks import DEFAULT_MAX_ANSWER_CHARS, DEFAULT_MAX_QUOTE_CHARS, REASONS
from vera.generate.core import GenerationResult, generate_testset
from vera.generate.estimate import GenerationEstimate, estimate_testset
from vera.generate.selection import CATEGORIES, DEFAULT_MIX, parse_mix
from vera.generate.summary import estimate_line, summary_lines, write_dataset

__all__ = [
    "CATEGORIES",
    "DEFAULT_MAX_ANSWER_CHARS",
    "DEFAULT_MAX_QUOTE_CHARS",
    "DEFAULT_MIX",
    "REASONS",
    "GenerationEstimate",
    "GenerationResult",
    "estimate_line",
    "estimate_testset",
    "generate_testset",
    "parse_mix",
    "summary_lines",
    "write_dataset",
]
