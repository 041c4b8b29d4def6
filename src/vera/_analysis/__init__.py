"""The judge work for one sample, planned once and shared by every metric that reads it."""

from vera._analysis._analysis import (
    WorkItem,
    analyse_claims,
    analyse_sample,
    planned_work,
    work_pieces,
    work_plan,
)
from vera._analysis._rubrics import rubric_checklist

__all__ = [
    "WorkItem",
    "analyse_claims",
    "analyse_sample",
    "planned_work",
    "rubric_checklist",
    "work_pieces",
    "work_plan",
]
