"""The client's own CPU time a sample: one framework's runner, in this process, against a server.

Why: on a shared machine samples/s moves with the other jobs' load, while the CPU time the
framework's process spends on the run moves much less. This runs `runners.py`'s runner for
FRAMEWORK after its imports (and, with --warm, VERA's language model) and prints the process
CPU seconds of the run, per sample. One run a process, as `run.py` runs each (a second run
in the same process would find its caches warm): run each framework in turn, several times,
and compare the smallest figures.

    python benchmarks/llm_judges/sim_server.py --port 8765 &
    python benchmarks/llm_judges/synth.py --samples 150 --out samples.jsonl
    for i in 1 2 3 4 5; do for f in vera ragas; do
        python benchmarks/llm_judges/client_cpu.py $f --samples samples.jsonl \\
            --url http://127.0.0.1:8765
    done; done
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import runners
from synth import read_jsonl

WHITEBOX = "the language model's warm-up"


def one_run(framework: str, samples: Path, url: str) -> dict[str, float]:
    """Process CPU seconds and wall seconds of one run of `framework` over `samples`."""
    cpu, wall = time.process_time(), time.perf_counter()
    if framework == "vera":
        with tempfile.TemporaryDirectory() as folder:
            concurrency = runners.DEFAULT_CONCURRENCY["vera"]
            cache = Path(folder) / "cache.sqlite"
            out = runners.run_vera(samples, url, concurrency, cache=cache)
    else:
        out = runners.RUNNERS[framework](samples, url, runners.DEFAULT_CONCURRENCY[framework])
    return {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "lost": out["lost"],
    }


def _imports(framework: str, warm: bool) -> None:
    runners.warm_openai_sdk()
    if framework == "vera":
        import vera._run  # noqa: F401  (the run engine, as `vera.aevaluate` imports it)

        if warm:
            from vera._text import identify

            identify("xyzzy plugh")  # too short for the word lists: loads the model
    elif framework == "ragas":
        import ragas.llms
        import ragas.metrics.collections  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework", choices=("vera", "ragas"))
    parser.add_argument("--samples", type=Path, required=True)
    parser.add_argument("--url", required=True, help="server root, e.g. http://127.0.0.1:8765")
    parser.add_argument(
        "--warm", action="store_true", help="load VERA's language model before the runs"
    )
    args = parser.parse_args()
    _imports(args.framework, args.warm)
    run = one_run(args.framework, args.samples, args.url)
    run["cpu_ms_per_sample"] = 1000 * run["cpu_s"] / len(read_jsonl(args.samples))
    print(json.dumps({"framework": args.framework, "warm": args.warm, **run}))


if __name__ == "__main__":
    main()
