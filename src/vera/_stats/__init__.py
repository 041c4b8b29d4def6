"""Statistics: intervals, paired tests, agreement with human labels, prediction-powered
calibration.
"""

from vera._stats._agreement import Confusion, auroc
from vera._stats._calibration import CalibrationTally, corrected_mean, wilson_interval
from vera._stats._stats import EXACT_DISTINCT, ValueCounts, bootstrap_ci, estimate, percentile

__all__ = [
    "EXACT_DISTINCT",
    "CalibrationTally",
    "Confusion",
    "ValueCounts",
    "auroc",
    "bootstrap_ci",
    "corrected_mean",
    "estimate",
    "percentile",
    "wilson_interval",
]
