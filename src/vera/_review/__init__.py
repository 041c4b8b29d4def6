"""People reviewing a stored run: the calibration and triage queues, labels stored beside the
judge's verdicts, the run's calibration from them, and the labelled dataset they export.
"""

from vera._review._review import (
    MAX_NOTE_CHARS,
    MAX_REVIEWER_CHARS,
    QUEUES,
    SAMPLE_LABELS,
    ExportScope,
    ReviewError,
    ReviewState,
    SampleLabels,
    TriageItem,
    add_label,
    calibration_order,
    current_labels,
    export_labels,
    review_calibration,
    review_state,
    reviewed_report_html,
    triage_order,
)

__all__ = [
    "MAX_NOTE_CHARS",
    "MAX_REVIEWER_CHARS",
    "QUEUES",
    "SAMPLE_LABELS",
    "ExportScope",
    "ReviewError",
    "ReviewState",
    "SampleLabels",
    "TriageItem",
    "add_label",
    "calibration_order",
    "current_labels",
    "export_labels",
    "review_calibration",
    "review_state",
    "reviewed_report_html",
    "triage_order",
]
