"""The `vera` command line. Errors become a message and an exit code here, and nowhere else.

One module per command; each parses its options, calls the library once, renders, and picks
the exit code. `_commands.COMMANDS` names each command's module, imported only when the command
is used, so `vera --help` loads none of the engine. Exit codes (docs/reliability.md): 0 every
sample scored and every gate holds; 1 a gate failed; 2 bad usage or input, nothing evaluated (or
a failure every sample would hit, such as a rejected key); 3 the run is incomplete (samples
errored or were skipped beyond --max-errors, or none could be scored).
"""

from vera.cli._app import app, main

__all__ = ["app", "main"]
