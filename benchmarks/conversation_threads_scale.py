"""The HTML report of a run over many conversations: its size, and how much of it the threads take.

Writes N conversations (a system prompt, the user's question, a tool call, the tool's result
of about 170 characters, the answer; one answer in ten changes the tool's number), evaluates
them with the offline judge as `vera eval -d FILE --html` does, and prints the report's size,
how many conversations it shows as threads and lists in the table, and the bytes of the
threads. The report shows the worst 50 threads and lists the worst 500 (see
docs/conversations.md), so the page stays bounded however many conversations a run has.

    .venv/bin/python benchmarks/conversation_threads_scale.py --conversations 1000
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import vera


def _conversation(i: int) -> dict[str, object]:
    changed = 7 if i % 10 == 3 else 0
    return {
        "id": f"c{i:04}",
        "messages": [
            {"role": "system", "content": "You are a pricing assistant."},
            {"role": "user", "content": f"What does plan {i} cost?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "function": {"name": "price", "arguments": json.dumps({"plan": i})},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call_{i}",
                "content": f"Plan {i} costs {i + 10} dollars a month, billed yearly. " * 3,
            },
            {"role": "assistant", "content": f"Plan {i} costs {i + 10 + changed} dollars a month."},
        ],
    }


def measure(conversations: int, folder: Path) -> dict[str, int]:
    """The report's figures for a run over `conversations` conversations."""
    data = folder / "chats.jsonl"
    data.write_text(
        "".join(json.dumps(_conversation(i)) + "\n" for i in range(conversations)),
        encoding="utf-8",
    )
    out = folder / "report.html"
    vera.run_evaluation(data, history=False, reports={"html": out})
    page = out.read_text(encoding="utf-8")
    start = page.index('<div id="threads">')
    return {
        "bytes": len(page.encode("utf-8")),
        "threads": page.count('<details class="thread'),
        "table_rows": page.count("<tr data-conversation="),
        "thread_bytes": len(page[start : page.index("</section>", start)].encode("utf-8")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, nargs="+", default=[1000])
    args = parser.parse_args()
    for n in args.conversations:
        with tempfile.TemporaryDirectory() as folder:
            figures = measure(n, Path(folder))
        print(
            f"{n:,} conversations: report {figures['bytes']:,} bytes, "
            f"{figures['threads']} threads ({figures['thread_bytes']:,} bytes), "
            f"{figures['table_rows']} table rows"
        )


if __name__ == "__main__":
    main()
