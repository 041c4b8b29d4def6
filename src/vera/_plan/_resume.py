"""What a resumed run shares with the run it resumes: `resume_differences`, `resumed_with`.

A resumed run adds its samples to the stored run's report, so everything that changes a
result or the bill must be what the stored run used: the judge and where its key goes, the
metrics and their thresholds, the prompts, the sampling, the budget, the concurrency, the
cache. The stored value is used unless the user names the setting again (a flag with
`--resume`, `accept=` from Python); a plan that differs otherwise is refused, naming each
difference. The dataset's content is checked by the engine (`vera._run`), which reads it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from vera._plan._plan import RunPlan
from vera._plan._setting_uses import RESUME_SETTINGS
from vera._types._errors import ConfigError
from vera._types._secrets import redact

NOTICED = ("judge", "judge_base_url", "judge_samples", "max_cost", "concurrency", "cache_path")
"""The stored settings a resumed run says it applies (with the history and the batch mode)."""


def _plan_parts(plan: RunPlan) -> dict[str, Any]:
    """What a plan asks beyond its settings that changes a result."""
    return {
        "metrics": [(m.name, sorted(m.options.items())) for m in plan.metrics],
        "threshold": plan.threshold,
        "pipeline": plan.pipeline,
        "baselines": plan.baselines,
        "generator": plan.generator.spec,
        "quick": plan.quick,
        "dataset": (plan.dataset.source, plan.dataset.format),
    }


def _same(key: str, stored: Any, given: Any) -> bool:
    if key == "judge_base_url" and isinstance(given, str):
        return stored in (given, redact(given))  # the store keeps no credentials
    return bool(stored == given)


def resume_differences(stored: RunPlan, given: RunPlan, accept: Collection[str] = ()) -> list[str]:
    """Each way `given` differs from `stored` in what changes a result or the bill, as
    "name: stored X, now Y", leaving out the settings named in `accept`."""
    pairs = [
        (key, getattr(stored.settings, key), getattr(given.settings, key))
        for key in RESUME_SETTINGS
    ]
    theirs, ours = _plan_parts(stored), _plan_parts(given)
    pairs += [(key, theirs[key], ours[key]) for key in theirs]
    return [
        f"{key}: stored {_shown(old)}, now {_shown(new)}"
        for key, old, new in pairs
        if key not in accept and not _same(key, old, new)
    ]


def check_resumed(stored: RunPlan, given: RunPlan, run_id: str, accept: Collection[str]) -> None:
    """Refuse (exit 2) to resume `run_id` with a plan that differs from the stored one in
    what changes a result or the bill, unless each difference is named in `accept`."""
    differences = resume_differences(stored, given, accept)
    if differences:
        raise ConfigError(
            f"run {run_id} cannot be resumed with other settings than it was started with: "
            f"{'; '.join(differences)}. Its report would mix the two. Resume it as it was, "
            "name a setting again to change it for the samples left (vera eval --resume "
            f"{run_id} --concurrency 4; accept=('concurrency',) from Python), or start a new run"
        )


def resumed_with(stored: RunPlan, given: Mapping[str, Any]) -> tuple[RunPlan, list[str]]:
    """`stored` with the settings named again in `given` (None: not named), and "name=value"
    for each that changes the stored value."""
    named = {key: value for key, value in given.items() if value is not None}
    if not named:
        return stored, []
    settings = stored.settings.merge(named, origin="--resume")
    changed = [
        f"{key}={_shown(getattr(settings, key))}"
        for key in named
        if not _same(key, getattr(stored.settings, key), getattr(settings, key))
    ]
    return stored.model_copy(update={"settings": settings}), changed


def resume_notice(plan: RunPlan) -> str:
    """The stored settings a resumed run applies, as "judge=..., concurrency=..." (the
    base URL as the store keeps it, without credentials)."""
    settings = plan.settings
    shown = [f"{key}={_shown(getattr(settings, key))}" for key in NOTICED]
    shown.append(f"history={_shown(settings.history_path)}")
    if settings.batch:
        shown.append("batch=True")
    return ", ".join(shown)


def _shown(value: Any, limit: int = 120) -> str:
    """A value in a message, control characters escaped (a stored one may be hostile)."""
    if value is None:
        return "none"
    text = redact(value) if isinstance(value, str) else str(value)
    text = repr(text) if isinstance(value, str) else text.encode("unicode_escape").decode()
    return text if len(text) <= limit else text[: limit - 3] + "..."
