"""What a run will do: settings (flags, vera.toml, environment) composed from each component's
options, and the `RunPlan` built from them.
"""

from vera._plan._plan import (
    DEFAULT_METRICS,
    QUICK_SAMPLES,
    DatasetRef,
    GeneratorSpec,
    MetricSpec,
    RetrievalOptions,
    RunPlan,
    build_plan,
    code_references,
    metric_specs,
    named_again,
    resume_command,
)
from vera._plan._resume import (
    check_resumed,
    resume_differences,
    resume_notice,
    resumed_with,
)
from vera._plan._setting_uses import RESUME_SETTINGS, SETTING_USES, SettingUse
from vera._plan._settings import DEFAULT_CONCURRENCY, Settings, load_settings
from vera._sample_limits import (
    DEFAULT_MAX_CONTEXT_CHARS,
    DEFAULT_MAX_RESPONSE_CHARS,
    DEFAULT_SAMPLE_TIMEOUT,
    SampleLimitError,
    SampleLimitOptions,
    SampleLimits,
    SampleTimeoutError,
    check_deadline,
    check_sizes,
    sample_deadline,
)

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_CONTEXT_CHARS",
    "DEFAULT_MAX_RESPONSE_CHARS",
    "DEFAULT_METRICS",
    "DEFAULT_SAMPLE_TIMEOUT",
    "QUICK_SAMPLES",
    "RESUME_SETTINGS",
    "SETTING_USES",
    "DatasetRef",
    "GeneratorSpec",
    "MetricSpec",
    "RetrievalOptions",
    "RunPlan",
    "SampleLimitError",
    "SampleLimitOptions",
    "SampleLimits",
    "SampleTimeoutError",
    "SettingUse",
    "Settings",
    "build_plan",
    "check_deadline",
    "check_resumed",
    "check_sizes",
    "code_references",
    "load_settings",
    "metric_specs",
    "named_again",
    "resume_command",
    "resume_differences",
    "resume_notice",
    "resumed_with",
    "sample_deadline",
]
