"""The guarded JSON reader's names as the dataset readers have always imported them; the
reader itself is `vera._json`, a bottom layer, so the providers beside datasets share it."""

from __future__ import annotations

from vera._json import (
    MAX_LINE_BYTES,
    MAX_NESTING,
    JsonRefused,
    TooDeepError,
    bounded_lines,
    decode_at,
    first_line,
    loads_bounded,
    opens,
    scan_value,
    skip_value,
)

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_NESTING",
    "JsonRefused",
    "TooDeepError",
    "bounded_lines",
    "decode_at",
    "first_line",
    "loads_bounded",
    "opens",
    "scan_value",
    "skip_value",
]
