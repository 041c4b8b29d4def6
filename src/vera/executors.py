"""The vocabulary of executors: what runs a pass's samples (in this process, or on Ray).

An executor is chosen by name (`--executor NAME`, `executor = "NAME"`); a plugin adds one under
the `vera.executors` entry point group as a factory `factory(plan) -> Executor`
(docs/plugins.md). An `Executor` has one method, `execute(rows, work, sink)`: it calls
`run_pass`'s per-sample work (`PassWork`) for each row and hands each result to the `sink`.
"""

from vera._run import EXECUTORS, Executor, LocalExecutor, PassSink, PassWork, Rows, run_pass

__all__ = [
    "EXECUTORS",
    "Executor",
    "LocalExecutor",
    "PassSink",
    "PassWork",
    "Rows",
    "run_pass",
]
