"""VERA's LLM judge on a real small model, served on this machine: what issue 45 measured.

Starts llama-cpp-python's OpenAI-compatible server (built by `setup.sh`) on 127.0.0.1 with the
Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, waits until it answers, and judges, per judge mode, the
bundled example's first `--example` samples and `--ragtruth` rows per task type of the shared
RAGTruth dev file (benchmarks/data/ragtruth_dev.jsonl), with the server as it is: no proxy, no
flag (VERA negotiates the structured-output mode itself). It reports per mode: samples scored
and errored, invalid replies (each one re-asked), calls, prompt and completion tokens and
seconds a sample, and the balanced accuracy of the answer verdict (faithfulness below the
metric's 0.5 threshold flags the answer) against the labels: RAGTruth's, and the example's
planted errors (`metadata.planted`).

Not part of CI: about 20 s a sample on 2 CPU cores.

    bash benchmarks/real_model/setup.sh
    python benchmarks/real_model/run.py --modes batched --out real_model.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import vera
from vera.datasets import bundled_path
from vera.judges import LLMJudge, create_judge
from vera.plan import Settings
from vera.providers import ChatModel, ChatRequest, ChatResponse, ManagedChatModel

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
RAGTRUTH = HERE.parent / "data" / "ragtruth_dev.jsonl"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
REASKS = ("That reply was not valid", "Your reply lists no claims")


class Counting:
    """The server's model, counting the calls and the re-asks (a re-ask follows an invalid
    reply) that reach it."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.calls = 0
        self.reasks = 0

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        last = request.messages[-1].content
        self.reasks += last.startswith(REASKS)
        return await self.inner.complete(request)


def example_samples(count: int) -> list[tuple[vera.Sample, int | None]]:
    path = bundled_path("example")
    assert path is not None
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    samples = list(vera.load_dataset(path))[:count]
    labels = {row["id"]: int(row["metadata"].get("planted") is not None) for row in rows}
    return [(sample, labels.get(sample.id)) for sample in samples]


def ragtruth_samples(per_task: int) -> list[tuple[vera.Sample, int | None]]:
    taken: dict[str, int] = {}
    found = []
    for line in RAGTRUTH.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        task = row["task_type"]
        if taken.get(task, 0) >= per_task:
            continue
        taken[task] = taken.get(task, 0) + 1
        sample = vera.Sample(
            id=row["id"], query=row["query"], response=row["response"], contexts=row["contexts"]
        )
        found.append((sample, int(row["label"])))
    return found


@contextmanager
def served(python: str, model: Path, port: int, n_ctx: int, log: Path) -> Iterator[str]:
    """llama-cpp-python's server on 127.0.0.1:`port`, until the block ends."""
    command = [
        python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_NAME,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
    ]  # fmt: skip
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 600
        while True:
            if server.poll() is not None:
                sys.exit(f"the server exited ({server.returncode}); see {log}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit(f"the server did not answer within 600 s; see {log}")
                time.sleep(2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def balanced_accuracy(pairs: list[tuple[int, int]]) -> float | None:
    """Mean recall of both classes, for (label, flagged) pairs; None without both classes."""
    recalls = []
    for cls in (0, 1):
        of_class = [flagged for label, flagged in pairs if label == cls]
        if not of_class:
            return None
        recalls.append(sum(flagged == cls for flagged in of_class) / len(of_class))
    return sum(recalls) / 2


def judge_rows(
    url: str, mode: str, rows: list[tuple[vera.Sample, int | None]], timeout: float
) -> dict[str, Any]:
    settings = Settings(
        judge=f"openai:{MODEL_NAME}",
        judge_base_url=url,
        judge_mode=mode,
        cache=False,
        timeout=timeout,
        sample_timeout=timeout * 4,
        max_errors=str(len(rows)),
        fail_fast=0,
    )
    judge = create_judge(settings.judge, settings)
    assert isinstance(judge, LLMJudge) and isinstance(judge.model, ManagedChatModel)
    counting = Counting(judge.model.inner)
    judge.model.inner = counting
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = vera.evaluate(
            [s for s, _ in rows], ["faithfulness"], judge=judge, settings=settings, concurrency=1
        )
    seconds = time.monotonic() - started
    usage = judge.model.ledger.summary()
    labels = {s.id: label for s, label in rows}
    pairs, errors = [], []
    for result in report.samples:
        if result.status.value != "scored":
            errors.append(f"{result.id}: {result.error}")
            continue
        label = labels[result.id]
        if label is not None:
            pairs.append((label, int(result.scores["faithfulness"] < 0.5)))
    n = len(rows)
    return {
        "mode": mode,
        "samples": n,
        "scored": sum(r.status.value == "scored" for r in report.samples),
        "errored": len(errors),
        "calls": counting.calls,
        "invalid_replies_reasked": counting.reasks,
        "reasked_share": round(counting.reasks / max(counting.calls, 1), 3),
        "calls_per_sample": round(counting.calls / n, 2),
        "prompt_tokens_per_sample": round(int(usage["prompt_tokens"]) / n),
        "completion_tokens_per_sample": round(int(usage["completion_tokens"]) / n),
        "seconds_per_sample": round(seconds / n, 1),
        "balanced_accuracy": balanced_accuracy(pairs),
        "labelled": len(pairs),
        "warnings": sorted({str(w.message) for w in caught if "response_format" in str(w.message)}),
        "errors": errors,
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=str(WORK / "venv" / "bin" / "python"))
    parser.add_argument("--model", type=Path, default=WORK / "model.gguf")
    parser.add_argument("--url", help="a server already running (its /v1 URL): none started")
    parser.add_argument("--modes", default="batched", help="comma-separated judge modes")
    parser.add_argument("--example", type=int, default=10, help="bundled example samples")
    parser.add_argument("--ragtruth", type=int, default=10, help="RAGTruth rows per task type")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a call may take")
    parser.add_argument("--out", type=Path, default=Path("real_model.json"))
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    sets = {
        "example": example_samples(args.example),
        "ragtruth": ragtruth_samples(args.ragtruth),
    }
    results: list[dict[str, Any]] = []

    def run_all(url: str) -> None:
        for mode in args.modes.split(","):
            for name, rows in sets.items():
                if not rows:
                    continue
                figures = {"rows": name, **judge_rows(url, mode, rows, args.timeout)}
                results.append(figures)
                print(json.dumps({k: v for k, v in figures.items() if k != "errors"}), flush=True)
                args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    if args.url:
        run_all(args.url)
    else:
        log = args.out.with_suffix(".server.log")
        with served(args.python, args.model, args.port, args.n_ctx, log) as url:
            run_all(url)


if __name__ == "__main__":
    main()
