"""What asking a rubric's items in the faithfulness verification call saves: the bundled
example judged for faithfulness and one rubric (of scope "claim", then of scope "answer"),
with the rubric batched (the default, `judge_batch_rubrics = true`) and alone (`false`), over
the scripted OpenAI model of the tests on a loopback server (`tests.support.scripted`), the
response cache off.

Printed for each: the calls the server received, the prompt tokens they carried (their
messages' characters / 4, VERA's own count), both per sample judged, what `--dry-run`
(`vera.estimate_plan`) predicted for the same plan, and whether the faithfulness verdicts and
the rubric's verdicts and scores of the two runs are identical (the scripted model answers a
prompt the same way, alone or joined, so any difference would be VERA's).

    python benchmarks/rubric_batching.py
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.scripted import scripted_openai  # noqa: E402

import vera  # noqa: E402
from vera.metrics import Rubric  # noqa: E402

CRITERIA = "States no figure the contexts do not give. Never says 'must'."
CHARS_PER_TOKEN = 4


def _run(url: str, batch: bool, rubric: Rubric) -> dict[str, Any]:
    options: dict[str, Any] = {
        "judge_base_url": url,
        "judge_replies": "compact",  # a hosted model on loopback: rubrics ride compact calls
        "judge_batch_rubrics": batch,
        "cache": False,
        "history": False,
        "concurrency": 1,
    }
    metrics: list[Any] = ["faithfulness", rubric]
    plan, bindings = vera.plan_evaluation("example", metrics, "openai:gpt-4o-mini", **options)
    estimate = vera.estimate_plan(plan, bindings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate("example", metrics, "openai:gpt-4o-mini", **options)
    judged = [s for s in report.samples if not s.error]
    return {
        "samples": len(judged),
        "errors": len(report.samples) - len(judged),
        "estimate": estimate,
        "results": {
            s.id: (
                s.results["faithfulness"].score,
                s.results[rubric.name].score,
                s.results[rubric.name].details.get("verdicts"),
                [(c.text, c.verdict, c.evidence, c.reason) for c in s.claims],
            )
            for s in judged
        },
    }


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")
    with LoopbackServer() as server:
        server.default = scripted_openai
        for scope in ("claim", "answer"):
            rubric = Rubric(name="house_rules", criteria=CRITERIA, scope=scope)
            rows = {}
            for batch in (False, True):
                server.requests.clear()
                found = _run(server.openai_url, batch, rubric)
                messages = [m for r in server.requests for m in r.json["messages"]]
                found["calls"] = len(server.requests)
                found["prompt_tokens"] = sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN
                rows[batch] = found
            print(f"scope {scope}:")
            for batch, found in rows.items():
                n, estimate = found["samples"], found["estimate"]
                print(
                    f"  {'batched' if batch else 'alone  '}: {n} samples, {found['errors']} "
                    f"errors · {found['calls']} calls ({found['calls'] / n:.2f} a sample) · "
                    f"{found['prompt_tokens']} prompt tokens "
                    f"({found['prompt_tokens'] / n:.0f} a sample) · --dry-run {estimate.calls} "
                    f"calls, {estimate.prompt_tokens} prompt tokens"
                )
            same = rows[True]["results"] == rows[False]["results"]
            print(f"  verdicts and scores identical in the two runs: {same}")


if __name__ == "__main__":
    main()
