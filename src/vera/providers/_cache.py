"""A response cache in one SQLite file: re-running an evaluation makes no provider calls.

The key is the request minus what cannot change the output, plus the prompt version: provider,
model, messages, schema, sampling parameters. API keys and base URLs never enter it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import warnings
from pathlib import Path

from vera._sqlite_file import DEFAULT_LOCK_TIMEOUT, Schema, SqliteFile
from vera.providers._base import ChatRequest, ChatResponse


def default_cache_path() -> Path:
    """responses.sqlite in $VERA_CACHE_DIR, else $XDG_CACHE_HOME/vera, else ~/.cache/vera."""
    root = os.environ.get("VERA_CACHE_DIR")
    if root:
        return Path(root) / "responses.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "vera" / "responses.sqlite"


def cache_key(provider: str, model: str, request: ChatRequest) -> str:
    """A stable hash of everything that can change a reply."""
    payload = {
        "provider": provider,
        "model": model,
        "messages": [[m.role, m.content] for m in request.messages],
        "schema": request.json_schema,
        "schema_name": request.schema_name,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "prompt_version": request.prompt_version,
        "draw": request.draw,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _m1_responses(db: sqlite3.Connection) -> None:
    """Version 1 of the cache's table (see `vera._sqlite_file.Migration`)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS responses "
        "(key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)"
    )


RESPONSES = Schema("responses", (_m1_responses,))
"""The cache file's one feature: its replies."""

_LEGACY = ({"responses": 1},)
"""A cache of `user_version` 1 was written before the registry (see `vera._sqlite_file`)."""


class ResponseCache:
    """Replies by cache key, in a SQLite file shared safely by threads and processes."""

    def __init__(
        self, path: Path | str | None = None, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    ) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._file = SqliteFile(
            self.path,
            what="the response cache",
            flag="--cache-path",
            schemas=(RESPONSES,),
            legacy=_LEGACY,
            lock_timeout=lock_timeout,
        )
        self._damaged: set[str] = set()

    def get(self, key: str) -> ChatResponse | None:
        """The reply cached under `key`; None when there is none, or when the stored one is
        damaged (said once per key with a warning: the call is made again and replaces it)."""
        rows = self._file.execute("SELECT response FROM responses WHERE key = ?", (key,))
        if not rows:
            return None
        try:
            found = ChatResponse.model_validate_json(rows[0][0])
        except ValueError:
            if key not in self._damaged:
                self._damaged.add(key)
                warnings.warn(
                    f"{self.path}: the cached reply {key[:12]} is damaged; asking the provider "
                    "again",
                    stacklevel=2,
                )
            return None
        return found.model_copy(update={"cached": True})

    def put(self, key: str, response: ChatResponse) -> None:
        blob = response.model_copy(update={"cached": False}).model_dump_json()
        self._file.execute(
            "INSERT OR REPLACE INTO responses (key, response, created) VALUES (?, ?, ?)",
            (key, blob, time.time()),
        )

    def __len__(self) -> int:
        return int(self._file.execute("SELECT COUNT(*) FROM responses")[0][0])

    def close(self) -> None:
        self._file.close()
