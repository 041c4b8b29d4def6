"""VERA's exception tree. The CLI maps each branch to a message and an exit code.

It sits in the types layer because the types themselves raise from it (`Verdict.parse` raises
`JudgeResponseError`) and that layer imports nothing else of VERA. `vera._types._errors` re-exports
every class, and is the name to import them by.

VeraError
 ├── DatasetError            a dataset cannot be read (missing file, unknown format, bad bytes)
 │    └── DatasetRowError    one row is invalid: names the file, line or row, and field
 ├── JudgeError              a judge failed for one sample
 │    └── JudgeResponseError the judge answered, but with something unusable
 ├── ConfigError             options or settings that cannot work together
 └── RunStopError            true of every sample to come: the run starts no new sample
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class VeraError(Exception):
    """Base of every error VERA raises on purpose."""


class DatasetError(VeraError):
    """A dataset file cannot be read as a whole."""


class DatasetRowError(DatasetError):
    """One row of a dataset is invalid.

    `location` is "line 7" for line-based formats and "row 3 (line 12)" for JSON arrays, so the
    message always points at the place to fix.
    """

    def __init__(self, path: Path | str, location: str, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.location = location
        self.field = field
        self.problem = problem
        where = f"{self.path}: {location}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {problem}")


class JudgeError(VeraError):
    """A judge could not produce verdicts for a sample."""


class JudgeResponseError(JudgeError):
    """A judge answered with something VERA cannot use (an unknown verdict, missing ids, …)."""


class ConfigError(VeraError):
    """Options that cannot work, such as an unknown metric or judge name."""


class RunStopError(VeraError):
    """Raised by one sample but true of every sample that would follow it, such as a rejected
    API key or a spent budget. The runner starts no new sample, keeps the finished ones, and
    reports the rest as skipped with this reason.

    `planned` is True for a stop the user asked for (a budget), False for a failure.
    """

    planned: ClassVar[bool] = False
