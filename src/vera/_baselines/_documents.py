"""A corpus from a folder: every text or Markdown file becomes a document to retrieve from."""

from __future__ import annotations

import warnings
from pathlib import Path

from vera._types import Context
from vera._types._errors import DatasetError

DOCUMENT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")


def load_documents(folder: Path | str) -> list[Context]:
    """Every `.txt`/`.md`/`.rst` file under `folder`, in path order; the id is the path
    relative to `folder` (what citations like `[guide/auth.md]` name)."""
    root = Path(folder)
    if not root.is_dir():
        raise DatasetError(f"{root}: not a folder of documents")
    documents = []
    inside = root.resolve()
    for path in sorted(p for p in root.rglob("*") if p.suffix.lower() in DOCUMENT_SUFFIXES):
        if not path.resolve().is_relative_to(inside):
            # A link out of the folder would quote files the user never meant to share.
            warnings.warn(
                f"{path}: skipped, a link to {path.resolve()}, outside {root}", stacklevel=2
            )
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        if text.strip():
            name = path.relative_to(root).as_posix()
            documents.append(Context(text=text, id=name, source=name))
    if not documents:
        raise DatasetError(f"{root}: no {', '.join(DOCUMENT_SUFFIXES)} files with text")
    return documents
