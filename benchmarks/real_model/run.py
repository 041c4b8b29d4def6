"""VERA's LLM judge on a real small model, served on this machine: what issue 45 measured.

Starts llama-cpp-python's OpenAI-compatible server (built by `setup.sh`) on 127.0.0.1 with the
Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, waits until it answers (or uses `--url`), and judges,
per judge mode, the rows of `rows.py` (the bundled example's first `--example` samples and
`--ragtruth` rows per task type of the shared RAGTruth dev file), one sample at a time, with
the server as it is: no proxy, no flag (VERA negotiates the structured-output mode itself).
It reports per mode and row set: samples scored and errored, invalid replies (each one
re-asked), calls, prompt and completion tokens and seconds a sample, and the balanced accuracy
against the labels of VERA's answer verdict (`vera._results.answer_verdict`, the verdict
`vera eval` gates on: any claim unsupported flags the answer), and, beside it, of
faithfulness below 0.5. The figures are rewritten after every sample (a run stopped early
keeps them), and every request's last message and reply go to OUT.replies.jsonl.
`peers.py` runs RAGAS and DeepEval on the same rows and server.

Not part of CI: tens of seconds to minutes a sample on 2 CPU cores.

    bash benchmarks/real_model/setup.sh
    python benchmarks/real_model/run.py --modes batched --out results/vera-batched.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from rows import MODEL_NAME, Row, balanced_accuracy, row_sets

import vera
from vera import SampleResult, Settings
from vera._results import answer_verdict
from vera._types import AnswerStatus
from vera.judges import LLMJudge, create_judge
from vera.providers import ChatModel, ChatRequest, ChatResponse, ManagedChatModel

WHITEBOX = "the report builder, on hand-made results"

HERE = Path(__file__).resolve().parent
WORK = Path(os.environ.get("REAL_MODEL_DIR", HERE / ".work"))
REASKS = ("That reply was not valid", "Your reply lists no claims")


class Counting:
    """The server's model, counting the calls and the re-asks (a re-ask follows an invalid
    reply) that reach it, and logging each request's last message and the reply's text."""

    def __init__(self, inner: ChatModel, replies: TextIO | None = None) -> None:
        self.inner = inner
        self.replies = replies
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
        reask = last.startswith(REASKS)
        self.reasks += reask
        try:
            response = await self.inner.complete(request)
        except Exception as exc:
            self._log({"asked": last[-600:], "reask": reask, "error": repr(exc)[:600]})
            raise
        self._log({"asked": last[-600:], "reask": reask, "reply": response.text})
        return response

    def _log(self, entry: dict[str, Any]) -> None:
        if self.replies is not None:
            self.replies.write(json.dumps(entry) + "\n")
            self.replies.flush()


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


def judge_rows(
    url: str,
    mode: str,
    rows: list[Row],
    timeout: float,
    replies: TextIO | None,
    progress: Callable[[dict[str, Any]], None],
    prompts: Path | None = None,
    reply_set: str = "auto",
    cache: Path | None = None,
) -> dict[str, Any]:
    """Judge `rows` one sample at a time (as `vera eval --concurrency 1` does), handing the
    figures so far to `progress` after each, so that a run stopped early keeps them."""
    settings = Settings(
        judge=f"openai:{MODEL_NAME}",
        judge_base_url=url,
        judge_mode=mode,  # type: ignore[arg-type]
        cache=cache is not None,
        cache_path=cache,
        judge_replies=reply_set,  # type: ignore[arg-type]
        timeout=timeout,
        sample_timeout=timeout * 4,
        max_errors=str(len(rows)),
        fail_fast=0,
        judge_prompts_dir=prompts,
    )
    judge = create_judge(settings.judge, settings)
    assert isinstance(judge, LLMJudge) and isinstance(judge.model, ManagedChatModel)
    counting = Counting(judge.model.inner, replies)
    judge.model.inner = counting
    results: list[tuple[Row, SampleResult]] = []
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for row in rows:
            sample = vera.Sample(
                id=row["id"], query=row["query"], response=row["response"], contexts=row["contexts"]
            )
            report = vera.evaluate([sample], ["faithfulness"], judge=judge, settings=settings)
            results.append((row, report.samples[0]))
            figures = _figures(mode, results, counting, judge, time.monotonic() - started)
            figures["warnings"] = sorted(
                {str(w.message) for w in caught if "response_format" in str(w.message)}
            )
            progress(figures)
    return figures


def _figures(
    mode: str,
    results: list[tuple[Row, SampleResult]],
    counting: Counting,
    judge: LLMJudge,
    seconds: float,
) -> dict[str, Any]:
    assert isinstance(judge.model, ManagedChatModel)
    usage = judge.model.ledger.summary()
    by_verdict, below_half, errors = [], [], []
    for row, result in results:
        verdict = answer_verdict(result, judge.partial_rule)
        if verdict is None or verdict.status is AnswerStatus.ERROR:
            errors.append(f"{result.id}: {result.error}")
            continue
        # The verdict `vera eval` gates on: any claim unsupported flags the answer.
        by_verdict.append((row["label"], int(verdict.status is AnswerStatus.UNFAITHFUL)))
        below_half.append((row["label"], int(result.scores["faithfulness"] < 0.5)))
    n = len(results)
    return {
        "framework": "vera",
        "mode": mode,
        "samples": n,
        "scored": len(by_verdict),
        "errored": len(errors),
        "calls": counting.calls,
        "invalid_replies_reasked": counting.reasks,
        "reasked_share": round(counting.reasks / max(counting.calls, 1), 3),
        "calls_per_sample": round(counting.calls / n, 2),
        "prompt_tokens_per_sample": round(int(str(usage["prompt_tokens"])) / n),
        "completion_tokens_per_sample": round(int(str(usage["completion_tokens"])) / n),
        "seconds_per_sample": round(seconds / n, 1),
        "balanced_accuracy": balanced_accuracy(by_verdict),
        "balanced_accuracy_below_half": balanced_accuracy(below_half),
        "flagged": sum(f for _, f in by_verdict),
        "labelled_hallucinated": sum(label for label, _ in by_verdict),
        "verdicts": {
            r.id: (r.verdict.status.value if r.verdict else r.status.value) for _, r in results
        },
        "errors": errors,
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=WORK, help="setup.sh's folder")
    parser.add_argument("--python", help="the server's Python (default WORK/venv/bin/python)")
    parser.add_argument("--model", type=Path, help="the GGUF (default WORK/model.gguf)")
    parser.add_argument("--url", help="a server already running (its /v1 URL): none started")
    parser.add_argument("--modes", default="batched", help="comma-separated judge modes")
    parser.add_argument("--example", type=int, default=10, help="bundled example samples")
    parser.add_argument("--ragtruth", type=int, default=10, help="RAGTruth rows per task type")
    parser.add_argument("--sets", default="example,ragtruth", help="which row sets, in order")
    parser.add_argument("--prompts", type=Path, help="prompt files that replace the bundled")
    parser.add_argument("--first", type=int, help="judge only the first N rows of each set")
    parser.add_argument(
        "--replies", default="auto", help="the prompt set: auto (reasoned here), compact, reasoned"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="a response cache: a second run reads the replies of the first (no call) and "
        "shows what a change to VERA's reading of them does; its calls and tokens are not counted",
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a call may take")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "vera.json")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    sets = row_sets(args.example, args.ragtruth)
    results: list[dict[str, Any]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def run_all(url: str) -> None:
        with args.out.with_suffix(".replies.jsonl").open("w", encoding="utf-8") as replies:
            for mode in args.modes.split(","):
                for name in args.sets.split(","):
                    if name not in sets:
                        continue

                    def progress(
                        figures: dict[str, Any], done: int = len(results), rows: str = name
                    ) -> None:
                        del results[done:]
                        results.append({"rows": rows, **figures})
                        args.out.write_text(json.dumps(results, indent=2) + "\n", "utf-8")

                    rows = sets[name][: args.first]
                    figures = judge_rows(
                        url,
                        mode,
                        rows,
                        args.timeout,
                        replies,
                        progress,
                        args.prompts,
                        reply_set=args.replies,
                        cache=args.cache,
                    )
                    shown = {k: v for k, v in figures.items() if k not in ("errors", "verdicts")}
                    print(json.dumps({"rows": name, **shown}), flush=True)

    if args.url:
        run_all(args.url)
    else:
        python = args.python or str(args.work / "venv" / "bin" / "python")
        model = args.model or args.work / "model.gguf"
        log = args.out.with_suffix(".server.log")
        with served(python, model, args.port, args.n_ctx, log) as url:
            run_all(url)


if __name__ == "__main__":
    main()
