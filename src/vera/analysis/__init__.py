"""The judge work for one sample, planned once and shared by every metric that reads it."""

from vera.analysis._analysis import (
    WorkItem,
    analyse_claims,
    analyse_sample,
    planned_work,
    work_pieces,
    work_plan,
)

__all__ = [
    "WorkItem",
    "analyse_claims",
    "analyse_sample",
    "planned_work",
    "work_pieces",
    "work_plan",
]
