"""`vera generate` on the bundled legal contracts, against a scripted generator.

The loopback server plays an OpenAI model that writes test-set items in a fixed mix (chosen by
each prompt's hash, `tests.support.testset_script.by_hash`): about 70 % good items quoting real
sentences, the rest junk replies, invented quotes, answers padded with an invented sentence,
and "unanswerable" questions the corpus answers. The offline judge checks every item. Printed:
the acceptance rate by category (kept / generated, all rounds) and the calls and tokens spent
per kept item, then the same run again, served by the response cache. Prompt tokens are
and completion tokens are counted in the requests the server received and the replies it gave,
by VERA's own estimator (`vera.judges._calls.tokens`, four characters a token), since the
scripted replies report a fixed usage; a real model's replies differ in length.

    .venv/bin/python benchmarks/generate_scripted.py --n 60 --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.support.loopback import LoopbackServer  # noqa: E402
from tests.support.testset_script import TestsetScript, by_hash  # noqa: E402

from vera import GenerationResult, Settings, generate_testset  # noqa: E402
from vera._generate import CATEGORIES  # noqa: E402
from vera.datasets import bundled_path  # noqa: E402
from vera.judges._calls import tokens  # noqa: E402

WHITEBOX = "the generator's own parts"


def _corpus(folder: Path) -> Path:
    path = bundled_path("legal")
    assert path is not None
    folder.mkdir(parents=True, exist_ok=True)
    for document in json.loads(path.read_text(encoding="utf-8"))["documents"]:
        (folder / f"{document['id']}.txt").write_text(document["text"], encoding="utf-8")
    return folder


def _tokens(server: LoopbackServer, since: int) -> tuple[int, int]:
    """Prompt tokens sent and completion tokens replied since request `since`; the script is
    a function of the request, so asking it again gives the reply it gave."""
    sent = replied = 0
    for request in server.requests[since:]:
        sent += sum(tokens(message["content"]) for message in request.json["messages"])
        reply = json.loads(server.default(request).body)
        replied += tokens(reply["choices"][0]["message"]["content"])
    return sent, replied


def _print(result: GenerationResult, provider_calls: int, spent: tuple[int, int]) -> None:
    print(f"kept {result.kept_total} of {result.requested} requested")
    print(f"{'category':<15}{'generated':>10}{'kept':>6}{'accepted':>10}")
    for category in CATEGORIES:
        asked = result.attempted.get(category, 0)
        if asked:
            kept = result.kept.get(category, 0)
            print(f"{category:<15}{asked:>10}{kept:>6}{kept / asked:>10.0%}")
    asked, kept = sum(result.attempted.values()), result.kept_total
    print(f"{'all':<15}{asked:>10}{kept:>6}{kept / asked:>10.0%}")
    print("rejected:", json.dumps(result.rejections, sort_keys=True))
    usage = result.usage
    per = max(kept, 1)
    sent, replied = spent
    print(
        f"provider calls {provider_calls} · ledger calls {usage['calls']} "
        f"({usage['cached_calls']} cached) · tokens sent {sent} · replied {replied}"
    )
    print(
        f"per kept item: {provider_calls / per:.2f} calls, {sent / per:.0f} prompt and "
        f"{replied / per:.0f} completion tokens"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer() as server:
        docs = _corpus(Path(tmp) / "docs")
        server.default = TestsetScript(by_hash)
        settings = Settings(judge_base_url=server.openai_url, cache_path=Path(tmp) / "c.sqlite")
        for label in ("first run", "re-run (response cache)"):
            before = server.request_count
            result = generate_testset(
                docs, "openai:loopback-model", n=args.n, seed=args.seed, settings=settings
            )
            print(f"== {label}")
            made = server.request_count - before
            _print(result, made, _tokens(server, len(server.requests) - made))


if __name__ == "__main__":
    main()
