"""The `vera` command line. Errors become a message and an exit code here, and nowhere else.

One module per command; each parses its options, calls the library once, renders, and picks
the exit code. Exit codes (docs/reliability.md): 0 every sample scored and every gate holds; 1 a
gate failed; 2 bad usage or input, nothing evaluated (or a failure every sample would hit, such
as a rejected key); 3 the run is incomplete (samples errored or were skipped beyond
--max-errors, or none could be scored).
"""

# Each command module registers its command on `app` when imported; the order is `--help`'s.
from vera.cli import (  # noqa: F401
    _benchmark,
    _calibrate,
    _compare,
    _conversations,
    _datasets,
    _eval,
    _generate,
    _github,
    _metrics,
    _monitor,
    _report,
    _rubric,
    _runs,
    _view,
)
from vera.cli._app import app, main

__all__ = ["app", "main"]
