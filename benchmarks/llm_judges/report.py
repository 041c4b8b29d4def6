"""Markdown tables from the driver's results, kept apart so they can be re-printed.

python benchmarks/llm_judges/report.py results/<stamp>/results.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _num(value: Any, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _rate(run: dict[str, Any] | None) -> str:
    if run is None:
        return ""
    if run.get("failed"):
        return "FAILED"
    text = _num(run.get("median_samples_per_s", run.get("samples_per_s")))
    spread = run.get("all_samples_per_s") or []
    if len(spread) > 1:
        text += f" [{min(spread):.0f}-{max(spread):.0f}]"
    if run.get("pct_of_ceiling") is not None:
        text += f" ({run['pct_of_ceiling']:.0f} %)"
    return text


def summary_table(results: dict[str, Any]) -> str:
    """One row per framework: cost per sample, then throughput in each scenario."""
    runs = results["runs"]
    timed = [s for s in runs if s != "cached"]
    names: list[str] = []
    for scenario in timed:
        for name in runs[scenario]:
            base = name.removesuffix("+rpm")
            if name in names:
                continue
            if base != name and base in names:  # "vera+rpm" right below "vera"
                names.insert(names.index(base) + 1, name)
            else:
                names.append(name)
    base = runs.get("0ms", {})
    head = ["framework", "calls/sample", "prompt tok/sample", "completion tok/sample"]
    head += [f"samples/s {s}" for s in timed] + ["lost (per scenario)"]
    if "cached" in runs:
        head.append("cached re-run calls")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        cost: dict[str, Any] = base.get(name) or next(
            (runs[s][name] for s in timed if name in runs[s]), {}
        )
        row = [name]
        if cost.get("failed") or not cost:
            row += ["n/a"] * 3
        else:
            row += [
                _num(cost["calls_per_sample"], 2),
                _num(cost["prompt_tokens_per_sample"], 0),
                _num(cost["completion_tokens_per_sample"], 0),
            ]
        row += [_rate(runs[s].get(name)) for s in timed]
        lost = [str(runs[s][name].get("lost", "-")) for s in timed if name in runs[s]]
        row.append(" / ".join(lost))
        if "cached" in runs:
            cached = runs["cached"].get(name)
            row.append(str(cached["server"]["requests"]) if cached and "server" in cached else "")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def dollar_table(results: dict[str, Any]) -> str:
    """Dollars per 1,000 samples for each framework and priced model, interactive and batch,
    and each as a multiple of RAGAS's (the first RAGAS run), from the unlimited scenario."""
    runs = next((results["runs"][s] for s in results["runs"] if s != "cached"), {})
    priced = [(name, run) for name, run in runs.items() if run.get("usd_per_1k_samples")]
    if not priced:
        return ""
    models = list(priced[0][1]["usd_per_1k_samples"])
    ragas = next((run for name, run in priced if name.startswith("ragas")), None)
    head = ["framework", "cached share"]
    for model in models:
        head += [f"$/1k {model}", f"$/1k {model} batch", "x RAGAS"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, run in priced:
        prompt = run["prompt_tokens_per_sample"]
        share = run.get("cached_tokens_per_sample", 0) / prompt if prompt else 0.0
        row = [name, f"{share:.0%}"]
        for model in models:
            usd = run["usd_per_1k_samples"][model]
            base = ragas["usd_per_1k_samples"][model]["interactive"] if ragas else None
            # A run through the batch APIs has its measured batch bill only: compared as such.
            billed = usd.get("interactive", usd["batch"])
            ratio = f"{billed / base:.2f}" if base else "n/a"
            shown = f"{usd['interactive']:.4f}" if "interactive" in usd else "-"
            row += [shown, f"{usd['batch']:.4f}", ratio]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def detail_table(results: dict[str, Any]) -> str:
    """Every run with the server's view of it."""
    head = [
        "scenario",
        "framework",
        "samples/s",
        "wall s",
        "scored",
        "lost",
        "calls",
        "429s",
        "max in flight",
        "connections",
        "mean score",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for scenario, runs in results["runs"].items():
        for name, run in runs.items():
            if run.get("failed"):
                lines.append(f"| {scenario} | {name} | FAILED: {run['error'][:120]} |")
                continue
            server = run["server"]
            lines.append(
                "| "
                + " | ".join(
                    [
                        scenario,
                        name,
                        _num(run["samples_per_s"]),
                        _num(run["wall_s"], 2),
                        str(run["scored"]),
                        str(run["lost"]),
                        str(server["ok"]),
                        str(server["rate_limited"]),
                        str(server["max_in_flight"]),
                        str(server["connections"]),
                        _num(run.get("mean_score"), 3),
                    ]
                )
                + " |"
            )
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    meta = results["meta"]
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v)
    headers = "" if meta.get("limit_headers", True) else ", limit not stated in headers"
    dollars = dollar_table(results)
    if dollars:
        prices = meta.get("prices")
        dollars = f"Dollars per 1,000 samples at list prices ({prices}):\n\n{dollars}\n\n"
    return (
        f"{meta['samples']} samples (seed {meta['seed']}), Python {meta['python']}, "
        f"{meta['cpus']} CPUs (pinned: {meta['pinned']}), tokens by {meta.get('token_rule')}"
        f"{headers}\n"
        f"{versions}\n\n{summary_table(results)}\n\n{dollars}{detail_table(results)}"
    )


if __name__ == "__main__":
    print(markdown(json.loads(Path(sys.argv[1]).read_text())))
