"""What a run will do: settings (flags, vera.toml, environment) composed from each component's
options, and the `RunPlan` built from them.
"""

from vera._sample_limits import (
    SampleLimitError,
    SampleLimitOptions,
    SampleLimits,
    SampleTimeoutError,
    check_deadline,
    check_sizes,
    sample_deadline,
)
from vera.plan._plan import (
    DEFAULT_METRICS,
    DatasetRef,
    MetricSpec,
    RunPlan,
    build_plan,
    code_references,
    metric_specs,
    named_again,
    resume_command,
)
from vera.plan._settings import Settings, load_settings

__all__ = [
    "DEFAULT_METRICS",
    "DatasetRef",
    "MetricSpec",
    "RunPlan",
    "SampleLimitError",
    "SampleLimitOptions",
    "SampleLimits",
    "SampleTimeoutError",
    "Settings",
    "build_plan",
    "check_deadline",
    "check_sizes",
    "code_references",
    "load_settings",
    "metric_specs",
    "named_again",
    "resume_command",
    "sample_deadline",
]
