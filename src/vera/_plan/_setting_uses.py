"""Where each setting can be given, one row per `Settings` field: the `vera eval` flag (or
why there is none), whether Python takes it as a keyword of the same name, and whether a
resumed run must keep it. The CLI's flag table, `vera.evaluate`'s settings keywords and
`RESUME_SETTINGS` are read from here, so a setting added to `Settings` without a row here
fails `tests/unit/test_setting_uses.py`, which says what to add.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SettingUse:
    """How one setting is given beside `vera.toml` / `[tool.vera]`."""

    flag: str | None = None
    """The `vera eval` flag that sets it ("--max-tokens"); None where `no_flag` says why."""
    no_flag: str = ""
    """Why the setting has no flag (the config file sets it)."""
    keyword: bool = True
    """A keyword of `vera.EvaluateOptions` of the same name, applied over `settings`; False
    where Python gives it otherwise (an argument, or an option of another shape)."""
    resume: bool = False
    """It changes a result or the bill: a resumed run keeps the stored run's value unless the
    user names it again (`vera._plan._resume`)."""


_ACCOUNT = (
    "a limit of the provider account, not of one run: set it once in vera.toml (docs/cost.md)"
)
_BATCH_TUNING = (
    "tunes how batch requests are grouped and changes no result: set it in vera.toml beside "
    "the account's batch limits (docs/cost.md, 'Batch APIs')"
)

SETTING_USES: dict[str, SettingUse] = {
    # The resumed-run settings first, in the order a refusal lists their differences.
    "judge": SettingUse("--judge", keyword=False, resume=True),
    "judge_base_url": SettingUse("--judge-base-url", resume=True),
    "judge_mode": SettingUse("--judge-mode", resume=True),
    "judge_output": SettingUse("--judge-output", resume=True),
    "judge_replies": SettingUse("--judge-replies", resume=True),
    "judge_samples": SettingUse("--judge-samples", resume=True),
    "judge_temperature": SettingUse("--judge-temperature", resume=True),
    "judge_max_tokens": SettingUse("--max-tokens", resume=True),
    "judge_prompts_dir": SettingUse("--prompts-dir", resume=True),
    "judge_batch_rubrics": SettingUse(
        no_flag="whether rubric items ride on the faithfulness verification call changes "
        "only how calls are grouped: set it in vera.toml (docs/metrics.md, 'Rubrics')",
        resume=True,
    ),
    "cascade_judge": SettingUse("--cascade-judge", resume=True),
    "cascade_low": SettingUse("--cascade-low", resume=True),
    "cascade_high": SettingUse("--cascade-high", resume=True),
    "offline_min_support": SettingUse("--offline-min-support", resume=True),
    "language": SettingUse("--language", resume=True),
    "fields": SettingUse("--field", keyword=False, resume=True),
    "max_cost": SettingUse("--max-cost", resume=True),
    "concurrency": SettingUse("--concurrency", resume=True),
    "cache": SettingUse("--no-cache", resume=True),
    "cache_path": SettingUse("--cache-path", resume=True),
    "batch": SettingUse("--batch", resume=True),
    "max_response_chars": SettingUse("--max-response-chars", resume=True),
    "max_context_chars": SettingUse("--max-context-chars", resume=True),
    # What the run does beside the verdicts: gates, limits, where it runs, the history.
    "max_errors": SettingUse("--max-errors"),
    "max_unfaithful": SettingUse("--max-unfaithful"),
    "min_faithful_turns": SettingUse("--min-faithful-turns"),
    "min_consistency": SettingUse("--min-consistency"),
    "user_facts": SettingUse("--user-facts"),
    "agent_steps": SettingUse("--agent-steps"),
    "sample_timeout": SettingUse("--sample-timeout"),
    "timeout": SettingUse("--timeout"),
    "retries": SettingUse("--retries"),
    "fail_fast": SettingUse("--fail-fast"),
    "batch_retry": SettingUse("--batch-retry"),
    "batch_poll": SettingUse("--batch-poll"),
    "executor": SettingUse("--executor"),
    "ray_address": SettingUse("--ray-address"),
    "ray_workers": SettingUse("--ray-workers"),
    "history": SettingUse("--no-history", keyword=False),
    "history_path": SettingUse("--history", keyword=False),
    # No flag: set once for a project rather than per run.
    "batch_window": SettingUse(no_flag=_BATCH_TUNING),
    "batch_size": SettingUse(no_flag=_BATCH_TUNING),
    "provider_concurrency": SettingUse(no_flag=_ACCOUNT, keyword=False),
    "requests_per_minute": SettingUse(no_flag=_ACCOUNT, keyword=False),
    "tokens_per_minute": SettingUse(no_flag=_ACCOUNT, keyword=False),
    "lock_timeout": SettingUse(
        no_flag="how long a write waits for another process's lock on the history or cache: "
        "a property of the machine's disk, set once in vera.toml (docs/reliability.md)",
        keyword=False,
    ),
    "gates": SettingUse(
        no_flag="a table of per-metric, per-category and latency limits, which no flag can "
        "hold: the [gates] table of vera.toml (--threshold and --max-unfaithful are the "
        "common gates)",
        keyword=False,
    ),
    "rubric": SettingUse(
        no_flag="[[rubric]] tables of criteria and items, which no flag can hold (Python "
        "passes vera.metrics.Rubric objects as metrics; docs/metrics.md, 'Rubrics')",
        keyword=False,
    ),
    "rubrics_file": SettingUse(
        no_flag="the file of [[rubric]] tables `vera rubric items --write` writes, named "
        "beside the rubrics in vera.toml (Python: vera.metrics.load_rubrics)",
        keyword=False,
    ),
    "plugins": SettingUse(
        no_flag="each plugin's own table of options, [plugins.NAME] in vera.toml (docs/plugins.md)",
        keyword=False,
    ),
}
"""Every `Settings` field and where it can be given (see `SettingUse`)."""


def settings_with(*, flag: bool | None = None, keyword: bool | None = None) -> tuple[str, ...]:
    """The settings, in table order, that have a flag / a keyword of their name (None: either)."""
    return tuple(
        name
        for name, use in SETTING_USES.items()
        if (flag is None or (use.flag is not None) == flag)
        and (keyword is None or use.keyword == keyword)
    )


RESUME_SETTINGS = tuple(name for name, use in SETTING_USES.items() if use.resume)
"""The settings that change a result or the bill, compared with the stored run's on resume."""
