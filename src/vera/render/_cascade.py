"""What a cascade judge's details say, in one line for every report format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vera._types import JudgeDetails


def cascade_summary(details: JudgeDetails | Mapping[str, Any]) -> str | None:
    """One line for a report on what a cascade judge sent on; None for any other judge."""
    share = details.get("share_sent")
    if "claims_sent" not in details or "calls_saved" not in details:
        return None
    shown = "—" if not isinstance(share, int | float) else f"{share:.0%}"
    return (
        f"Cascade: {details['claims_sent']} of {details.get('claims', 0)} claims ({shown}) sent "
        f"to {details.get('second', 'the second judge')}; {details['calls_saved']} LLM "
        "verification calls saved"
    )
