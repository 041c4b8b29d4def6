"""Driver: VERA's LLM judge against RAGAS and DeepEval faithfulness, on one simulated server.

For each scenario it starts `sim_server.py` with that latency and rate limit, then for each
framework resets the server's counters, runs the framework in a fresh process
(`runners.py`), and reads the server's /stats: calls and tokens per sample come from the
server, never from the frameworks' own accounting, so one rule counts for all.

Scenarios: "0ms" (no limit: pure framework overhead), "200ms@50rps" (latency, and a
token-bucket limit of 50 requests/s) and "cached" (VERA only: a second run on a filled
response cache, which must make 0 calls). Under a limit VERA runs twice: with no limit
configured ("vera": it paces by the server's x-ratelimit-* headers, or, with
--no-ratelimit-headers, by adapting to 429s alone), and with `requests_per_minute = limit * 60`
("vera+rpm").

    benchmarks/llm_judges/.venv/bin/python benchmarks/llm_judges/run.py --samples 150
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import env  # noqa: F401  (the offline environment, inherited by every subprocess)
import synth
from prices import describe, usd_per_1k_samples
from report import markdown

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
RUN_TIMEOUT_S = 900


@dataclass(frozen=True)
class Scenario:
    name: str
    latency_ms: float = 0.0
    rps_limit: float | None = None

    @classmethod
    def parse(cls, name: str) -> Scenario:
        if name == "cached":
            return cls(name)
        match = re.fullmatch(r"(\d+(?:\.\d+)?)ms(?:@(\d+(?:\.\d+)?)rps)?", name)
        if match is None:
            raise SystemExit(f"bad scenario {name!r}: use 0ms, 200ms@50rps or cached")
        limit = float(match.group(2)) if match.group(2) else None
        return cls(name, float(match.group(1)), limit)


def _pin(cpu: int | None) -> Any:
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


class Server:
    """The simulated server as a subprocess, for one scenario."""

    def __init__(
        self,
        scenario: Scenario,
        port: int,
        cpu: int | None,
        burst_s: float,
        limit_headers: bool = True,
    ) -> None:
        cmd = [
            PYTHON,
            str(HERE / "sim_server.py"),
            "--port",
            str(port),
            "--latency-ms",
            str(scenario.latency_ms),
            "--burst-s",
            str(burst_s),
        ]
        if scenario.rps_limit:
            cmd += ["--rps-limit", str(scenario.rps_limit)]
        if not limit_headers:
            cmd.append("--no-ratelimit-headers")
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=_pin(cpu))
        assert self.proc.stdout is not None
        banner = self.proc.stdout.readline()
        if not banner:
            raise SystemExit(f"the server did not start on port {port} (in use?)")

    def get(self, path: str, method: str = "GET") -> dict[str, Any]:
        request = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return dict(json.load(response))

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def run_framework(
    server: Server,
    framework: str,
    samples: Path,
    workdir: Path,
    cpu: int | None,
    *,
    cache: Path | None = None,
    rpm: float | None = None,
    cold: bool = False,
) -> dict[str, Any]:
    """One framework over all samples; its result joined with the server's counters.

    VERA's names are "vera", "vera:MODE" (a judge mode), either with "+rpm" (the limit set).
    """
    runner, _, mode = framework.removesuffix("+rpm").partition(":")
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "result.json"
    cmd = [
        PYTHON,
        str(HERE / "runners.py"),
        runner,
        "--samples",
        str(samples),
        "--url",
        server.url,
        "--out",
        str(out),
    ]
    if cache is not None:
        cmd += ["--cache", str(cache)]
    if rpm is not None:
        cmd += ["--rpm", str(rpm)]
    if mode:
        cmd += ["--mode", mode]
    if cold:
        cmd.append("--cold")
    server.get("/reset", "POST")
    log = workdir / "log.txt"
    with log.open("w") as sink:
        try:
            code = subprocess.run(
                cmd,
                cwd=workdir,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=RUN_TIMEOUT_S,
                preexec_fn=_pin(cpu),
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            code = None
            sink.write(f"\ntimed out after {RUN_TIMEOUT_S} s\n")
    stats = server.get("/stats")
    stats["connections"] -= 1  # the /stats request's own connection
    if code != 0 or not out.exists():
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        return {"framework": framework, "failed": True, "error": " | ".join(tail), "server": stats}
    result = json.loads(out.read_text())
    result["framework"] = framework
    result["server"] = stats
    n = result["samples"] or 1
    # Useful throughput: scored samples only; a lost sample is no result, however fast.
    result["samples_per_s"] = result["scored"] / result["wall_s"] if result["wall_s"] else None
    result["calls_per_sample"] = stats["ok"] / n
    result["prompt_tokens_per_sample"] = stats["prompt_tokens"] / n
    result["completion_tokens_per_sample"] = stats["completion_tokens"] / n
    # Read from either provider's cache: OpenAI's prefix cache, Anthropic's breakpoints.
    result["cached_tokens_per_sample"] = (
        stats["cached_tokens"] + stats["anthropic_read_tokens"]
    ) / n
    result["cache_write_tokens_per_sample"] = stats["cache_write_tokens"] / n
    # A run through the batch APIs ("vera:batch") is billed at batch rates only: measured.
    result["usd_per_1k_samples"] = usd_per_1k_samples(stats, n, sent_in_batches=mode == "batch")
    result["batches"] = stats.get("batches", 0)
    limit = stats.get("rps_limit")
    if limit and result["calls_per_sample"] and result["samples_per_s"]:
        result["ceiling_samples_per_s"] = limit / result["calls_per_sample"]
        result["pct_of_ceiling"] = 100 * result["samples_per_s"] / result["ceiling_samples_per_s"]
    return result


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median throughput; all throughputs are kept alongside."""
    good = [r for r in runs if not r.get("failed")]
    if not good:
        return runs[-1]
    ordered = sorted(good, key=lambda r: r["samples_per_s"] or 0)
    chosen = dict(ordered[len(ordered) // 2])
    chosen["all_samples_per_s"] = [r["samples_per_s"] for r in good]
    chosen["median_samples_per_s"] = statistics.median(r["samples_per_s"] for r in good)
    return chosen


def run_scenario(
    server: Server,
    scenario: Scenario,
    frameworks: list[str],
    samples: Path,
    workdir: Path,
    cpu: int | None,
    repeats: int,
    cold: bool,
) -> dict[str, Any]:
    """Every framework in one scenario; VERA twice under a limit (adaptive, and with rpm)."""
    runs: dict[str, Any] = {}
    if scenario.name == "cached":
        for name in (f for f in frameworks if f.startswith("vera")):
            where = workdir / "cached" / name.replace(":", "_")
            cache = where / "cache.sqlite"
            fill = run_framework(server, name, samples, where / "fill", cpu, cache=cache, cold=cold)
            again = run_framework(
                server, name, samples, where / "rerun", cpu, cache=cache, cold=cold
            )
            again["fill_run_calls"] = fill.get("server", {}).get("ok")
            runs[name] = again
        return runs
    names: list[str] = []
    for name in frameworks:
        names.append(name)
        if scenario.rps_limit and name.startswith("vera"):
            names.append(f"{name}+rpm")
    for name in names:
        rpm = scenario.rps_limit * 60 if name.endswith("+rpm") and scenario.rps_limit else None
        attempts = []
        for i in range(1 if scenario.rps_limit else max(1, repeats)):
            where = workdir / scenario.name.replace("@", "_") / f"{name.replace(':', '_')}-{i}"
            attempts.append(
                run_framework(
                    server,
                    name,
                    samples,
                    where,
                    cpu,
                    cache=where / "cache.sqlite",
                    rpm=rpm,
                    cold=cold,
                )
            )
        runs[name] = _median_run(attempts)
        _progress(scenario.name, name, runs[name])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--passage-words",
        type=int,
        default=76,
        help="words per passage (3 a sample); long ones show what prompt caching saves",
    )
    parser.add_argument(
        "--frameworks",
        default="vera,ragas,deepeval,deepeval+client",
        help="comma list of vera, vera:MODE, vera-claude[:MODE], ragas, ragas-legacy, deepeval, "
        "deepeval+client",
    )
    parser.add_argument("--scenarios", default="0ms,200ms@50rps,200ms@20rps,cached")
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs per framework in unlimited scenarios; the median is kept",
    )
    parser.add_argument("--burst-s", type=float, default=0.2, help="server bucket, seconds")
    parser.add_argument(
        "--no-ratelimit-headers",
        action="store_true",
        help="the server states no limit in x-ratelimit-* headers (VERA must find it by 429s)",
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--no-pin", action="store_true", help="do not pin server and client")
    parser.add_argument("--cold", action="store_true", help="leave the SDK's lazy import timed")
    parser.add_argument("--workdir", type=Path, default=HERE / "results")
    parser.add_argument("--out", type=Path, default=None, help="JSON results (default: workdir)")
    args = parser.parse_args()

    frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    scenarios = [Scenario.parse(s.strip()) for s in args.scenarios.split(",") if s.strip()]
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pin = len(cpus) >= 2 and not args.no_pin
    client_cpu, server_cpu = (cpus[0], cpus[-1]) if pin else (None, None)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    workdir = (args.workdir / stamp).resolve()
    samples = workdir / "samples.jsonl"
    synth.write_jsonl(synth.generate(args.samples, args.seed, args.passage_words), samples)

    results: dict[str, Any] = {
        "meta": {
            "started": stamp,
            "samples": args.samples,
            "seed": args.seed,
            "passage_words": args.passage_words,
            "python": platform.python_version(),
            "cpus": len(cpus) or os.cpu_count(),
            "pinned": client_cpu is not None,
            "burst_s": args.burst_s,
            "limit_headers": not args.no_ratelimit_headers,
            "prices": describe(),
            "versions": {
                p: _version(p)
                for p in (
                    "vera-eval",
                    "ragas",
                    "deepeval",
                    "openai",
                    "instructor",
                    "langchain-core",
                    "tiktoken",
                )
            },
        },
        "runs": {},
    }
    for scenario in scenarios:
        server_scenario = Scenario("0ms") if scenario.name == "cached" else scenario
        server = Server(
            server_scenario, args.port, server_cpu, args.burst_s, not args.no_ratelimit_headers
        )
        results["meta"]["token_rule"] = server.get("/stats")["token_rule"]
        try:
            results["runs"][scenario.name] = run_scenario(
                server, scenario, frameworks, samples, workdir, client_cpu, args.repeats, args.cold
            )
        finally:
            server.close()
        time.sleep(0.5)

    out = args.out or workdir / "results.json"
    out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(markdown(results))
    print(f"\nresults: {out}")


def _version(package: str) -> str | None:
    # None for a peer that is not installed, so `--frameworks vera` runs in VERA's own venv.
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _progress(scenario: str, name: str, run: dict[str, Any]) -> None:
    if run.get("failed"):
        print(f"[{scenario}] {name}: FAILED: {run['error']}", file=sys.stderr, flush=True)
        return
    print(
        f"[{scenario}] {name}: {run['samples_per_s']:.1f} samples/s, "
        f"{run['calls_per_sample']:.2f} calls/sample, lost {run['lost']}, "
        f"429s {run['server']['rate_limited']}",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    main()
