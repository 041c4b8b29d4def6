"""A regression gate's baseline: the stored run a run is compared with, checked before any
sample is evaluated."""

from __future__ import annotations

from vera._plan._plan import RunPlan
from vera._store._history import DEFAULT_HISTORY_PATH, RunStore
from vera._types._errors import ConfigError
from vera._types._fingerprint import RegressionCheck, RunFingerprint


def regression_without_history(plan: RunPlan) -> ConfigError:
    """Why a regression gate cannot run with the history off (it would compare with nothing
    and pass), saying how to turn the history on: raised as exit 2."""
    asked = f"--baseline-run {plan.baseline_run}" if plan.baseline_run else "--regression"
    return ConfigError(
        f"{asked} compares this run with a stored one, but the run history is off "
        "(--no-history, history = false in vera.toml, or history=False in Python); drop that "
        f"so runs are stored in {DEFAULT_HISTORY_PATH}, or name the history that holds the "
        "runs to compare with (--history-path PATH, history=PATH)"
    )


def regression_baseline(
    store: RunStore, plan: RunPlan, fingerprint: RunFingerprint, dataset: str
) -> RegressionCheck:
    """The stored run a regression gate of `plan` compares with, checked before any sample
    is evaluated.

    `--baseline-run` names it; it must have finished and have the same fingerprint, unless
    `plan.any_plan` (then the differences are kept, to be reported). Otherwise it is the newest
    finished run with the same fingerprint (with `any_plan`, the newest of `dataset`), or none
    (`compared_with` None: nothing to compare, said so). A mismatch is a `ConfigError` that
    lists what differs, field by field.
    """
    history = str(store.path)
    if plan.baseline_run is None:
        found = store.last_finished(
            digest=None if plan.any_plan else fingerprint.digest,
            dataset=dataset if plan.any_plan else None,
        )
        if found is None:
            return RegressionCheck(
                compared_with=None, fingerprint=fingerprint.digest, history=history
            )
        run_id = found.id
    else:
        run_id = store.get(plan.baseline_run).id
        if store.aggregates(run_id) is None:
            raise ConfigError(
                f"--baseline-run {run_id}: that run did not finish, so it has no scores to "
                f"compare with; finish it (vera eval --resume {run_id}) or name another run "
                "(vera runs list)"
            )
    differences = fingerprint.differences(store.fingerprint(run_id))
    if differences and not plan.any_plan:
        raise ConfigError(
            f"--baseline-run {run_id} measured something else than this run, so their scores "
            f"cannot be compared: {'; '.join(differences)}. Run the same plan, or pass "
            "--any-plan (any_plan=True) to compare anyway"
        )
    return RegressionCheck(
        compared_with=run_id,
        fingerprint=fingerprint.digest,
        differences=tuple(differences),
        history=history,
    )
