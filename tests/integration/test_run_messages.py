"""What a run says it measured is what it measured, and its advice fits the cause.

Issue 26: a run with no API key printed "Evaluated 10/10 samples … 1552.8 samples/s" and
advised `--max-errors`, which cannot help a run where nothing was scored.
"""

import socket
from pathlib import Path

from tests.support.cli import run_vera


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_run_without_an_api_key_names_the_variable_and_evaluated_nothing(
    tmp_path: Path,
) -> None:
    done = run_vera(tmp_path, "eval", "--quick", "--judge", "openai:gpt-4o-mini", "--no-history")
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert "Evaluated 0/10 samples" in said and "10 not evaluated: the run stopped" in said
    assert "samples/s" not in said.split("Evaluated 0/10", 1)[1].split("Run stopped")[0]
    assert "set OPENAI_API_KEY" in said
    assert "--max-errors" not in said


def test_a_run_where_every_sample_errored_says_so_and_not_to_allow_errors(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    args = ("--judge", "openai:gpt-4o-mini", "--judge-base-url", url, "--retries", "0")
    done = run_vera(
        tmp_path, "eval", "--quick", *args, "--fail-fast", "0", "--no-history", OPENAI_API_KEY="k"
    )
    assert done.returncode == 3
    said = " ".join(done.stderr.split())
    assert "Evaluated 0/10 samples" in said and "(10 errored)" in said
    assert "every sample that was tried errored (10 of 10)" in said
    assert "allow some with --max-errors" not in said
