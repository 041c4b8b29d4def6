"""The `vera` commands: each one's module and its line in `vera --help`, in the order listed.

`vera --help` lists this table and imports nothing else; a command's module (and the engine
behind it) is imported only when that command runs or shows its own help (`_app._LazyGroup`).
A test checks each module registers the command named here.
"""

from __future__ import annotations

from typing import NamedTuple


class CommandHome(NamedTuple):
    module: str
    line: str
    """The command's line in `vera --help`: one sentence, no markup."""


COMMANDS: dict[str, CommandHome] = {
    "eval": CommandHome(
        "vera.cli._eval", "Evaluate a dataset: claims, verdicts, scores, reports, an exit code."
    ),
    "conversations": CommandHome(
        "vera.cli._conversations", "Verify conversations turn by turn; show each as a thread."
    ),
    "compare": CommandHome(
        "vera.cli._compare", "Compare two stored runs metric by metric, with paired intervals."
    ),
    "report": CommandHome("vera.cli._report", "Write a stored run's report again."),
    "view": CommandHome(
        "vera.cli._view", "Browse the run history in a web browser; --review to label claims."
    ),
    "runs": CommandHome("vera.cli._runs", "The run history (.vera/runs.sqlite)."),
    "labels": CommandHome(
        "vera.cli._runs", "The labels people gave stored runs in `vera view --review`."
    ),
    "generate": CommandHome(
        "vera.cli._generate", "Write a test set from your documents, each item checked."
    ),
    "calibrate": CommandHome(
        "vera.cli._calibrate", "How far to trust the judge: its agreement with human labels."
    ),
    "benchmark": CommandHome(
        "vera.cli._benchmark", "Measure a judge on your own labels (precision, recall, AUROC)."
    ),
    "metrics": CommandHome(
        "vera.cli._metrics", "List the metrics --metric accepts: what each measures and costs."
    ),
    "rubric": CommandHome(
        "vera.cli._rubric", "Rubric metrics: the checklists of vera.toml's rubric tables."
    ),
    "monitor": CommandHome(
        "vera.cli._monitor", "Evaluate a sample of live OpenTelemetry traces, window by window."
    ),
    "datasets": CommandHome("vera.cli._datasets", "The datasets bundled with VERA."),
    "github": CommandHome(
        "vera.cli._github", "VERA in a GitHub Actions job: step outputs, the PR comment."
    ),
}
