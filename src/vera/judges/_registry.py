"""Judges by spec, for the CLI and config files: "NAME" or "NAME:ARG" (the first ":" splits).

Built in: "offline" (the embedded judge), "offline:learned" (the same with its learned support
model), "nli:PATH_OR_HUB_ID" (a local NLI model, the `nli` extra) and "cascade" (the offline
judge backed by the judge `settings.cascade_judge` names for the claims it is unsure of). A NAME
that is no judge but a provider makes an LLM judge: "openai:gpt-4o-mini",
"anthropic:claude-sonnet-4-5", wrapped once with retries, limits, the response cache and cost
accounting.

Installed packages add judges under the `vera.judges` entry-point group. The entry point's name
is the judge NAME and its object a factory with the built-ins' signature,
`factory(arg: str | None, settings: JudgeOptions) -> Judge`: `arg` is the text after the first ":"
(stripped; None without a ":"), `settings` the run's settings. A run passes its whole
`vera._plan.Settings`, which composes `JudgeOptions`; the registry is typed by the judges' own
options model so that it never imports the settings layer above it.

A plugin factory that declares `options_model` (a pydantic model, as an attribute of the
factory) is called as `factory(arg, settings, options=...)` with its `[plugins.NAME]` table
validated against that model (the model's defaults when there is no table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import cast

from vera._registry import PluginTables, Registry, plugin_options, plugin_table
from vera._types._errors import ConfigError
from vera.judges._base import Judge
from vera.judges._cascade import CascadeJudge
from vera.judges._llm import LLMJudge
from vera.judges._nli import NLIJudge
from vera.judges._offline import OfflineJudge
from vera.judges._options import JudgeOptions
from vera.judges._prompts import ReplyStyle
from vera.providers._base import ChatModel
from vera.providers._batch import (
    BATCH_WAIT,
    BatchingChatModel,
    check_batch_provider,
)
from vera.providers._cache import ResponseCache
from vera.providers._cost import CostLedger
from vera.providers._health import ProviderHealth
from vera.providers._limits import Limiter
from vera.providers._managed import ManagedChatModel
from vera.providers._options import ProviderOptions
from vera.providers._ready import is_local_model, local_defaults, readiness_for
from vera.providers._registry import PROVIDER_REGISTRY, create_chat_model, provider_names
from vera.providers._retry import RetryPolicy

ENTRY_POINT_GROUP = "vera.judges"
"""Packages can offer judges under this entry-point group (name = judge NAME)."""

JudgeFactory = Callable[[str | None, JudgeOptions], Judge]
"""`factory(arg, settings) -> Judge`: builds the judge "NAME:ARG" names (`arg` None for "NAME")."""


def _offline(arg: str | None, settings: JudgeOptions) -> Judge:
    """ "offline", or "offline:learned" with the learned support model."""
    try:
        if arg is None:
            return OfflineJudge(language=settings.language)
        if arg.lower().replace(" ", "") == "learned":
            return OfflineJudge(
                learned=True, min_support=settings.offline_min_support, language=settings.language
            )
    except ValueError as exc:  # a language the offline judge does not read
        raise ConfigError(f"{exc}; drop --language to identify each sample's") from exc
    raise ConfigError(f"unknown offline judge variant {arg!r}; use offline or offline:learned")


def _nli(arg: str | None, settings: JudgeOptions) -> Judge:
    """ "nli:PATH_OR_HUB_ID", a local NLI model."""
    if not arg:
        raise ConfigError("the NLI judge needs a model: nli:PATH_OR_HUB_ID")
    return NLIJudge(arg)


def _cascade_factory(arg: str | None, settings: JudgeOptions) -> Judge:
    """ "cascade": its second judge comes from `settings.cascade_judge`, not from the spec."""
    if arg is not None:
        raise ConfigError(
            f"cascade takes no argument (got 'cascade:{arg}'); name its second judge with "
            "--cascade-judge PROVIDER:MODEL"
        )
    return _cascade(settings)


JUDGE_REGISTRY: Registry[JudgeFactory] = Registry("judge", ENTRY_POINT_GROUP)
"""Judge factories by NAME: the built-ins and installed plugins (providers are looked up apart)."""
JUDGE_REGISTRY.register("offline", _offline)
JUDGE_REGISTRY.register("nli", _nli)
JUDGE_REGISTRY.register("cascade", _cascade_factory)

_FORMS = {"offline": "offline, offline:learned", "nli": "nli:MODEL", "cascade": "cascade"}
"""How each built-in judge is written, for error messages."""


def judge_names() -> list[str]:
    """Every judge NAME, plugins loaded: built-ins first, then plugins by name. Provider names
    ("openai", ...) are judges too, as "PROVIDER:MODEL" (`provider_names()`)."""
    return JUDGE_REGISTRY.names()


def _accepted_forms() -> str:
    """The judge specs accepted, for error messages."""
    judges = [_FORMS.get(name, f"{name}[:ARG]") for name in judge_names()]
    providers = [f"{name}:MODEL" for name in provider_names()]
    return ", ".join(judges + providers)


def create_judge(spec: str, settings: JudgeOptions | None = None) -> Judge:
    """Build the judge `spec` names, configured by `settings` (see the module docstring).

    A NAME that is neither a judge nor a provider raises `ConfigError` suggesting the closest.
    """
    settings = settings or JudgeOptions()
    name, sep, rest = spec.strip().partition(":")
    arg = rest.strip() if sep else None
    factory = JUDGE_REGISTRY.find(name)
    if factory is not None:
        return _built(factory, name.strip(), arg, settings)
    if name.strip() and name in PROVIDER_REGISTRY:
        if not arg:
            raise ConfigError(f"judge {spec.strip()!r} needs a model: {name.strip()}:MODEL")
        return LLMJudge(
            create_managed_model(spec.strip(), settings),
            mode=settings.judge_mode,
            samples=settings.judge_samples,
            temperature=settings.judge_temperature,
            max_tokens=settings.judge_max_tokens,
            prompts_dir=settings.judge_prompts_dir,
            batch_rubrics=settings.judge_batch_rubrics,
            replies=_reply_style(spec, settings),
        )
    raise JUDGE_REGISTRY.unknown(name, within=spec, also=provider_names(), known=_accepted_forms())


def _reply_style(spec: str, settings: JudgeOptions) -> ReplyStyle:
    """The prompt set `settings.judge_replies` names; "auto": reasoned for a model served on
    this machine (a small model, measured in docs/local-judges.md), compact for any other."""
    if settings.judge_replies != "auto":
        return settings.judge_replies
    return "reasoned" if is_local_model(spec, settings.judge_base_url) else "compact"


def _built(factory: JudgeFactory, name: str, arg: str | None, settings: JudgeOptions) -> Judge:
    """The judge `factory` builds, given its `[plugins.NAME]` options when it declares a model."""
    tables: dict[str, dict[str, object]] = (
        settings.plugins if isinstance(settings, PluginTables) else {}
    )
    options = plugin_options(factory, name, plugin_table(tables, name))
    if options is None:
        return factory(arg, settings)
    return cast("Callable[..., Judge]", factory)(arg, settings, options=options)


def _cascade(settings: JudgeOptions) -> CascadeJudge:
    """The offline judge first, the judge `cascade_judge` names for the claims it is unsure of;
    that judge is built as `create_judge` builds any, with the run's limits, cache and budget."""
    second = create_judge(cascade_spec(settings), settings)  # settings are checked first
    return CascadeJudge(
        OfflineJudge(learned=True),
        second,
        low=settings.cascade_low,
        high=settings.cascade_high,
    )


def cascade_spec(settings: JudgeOptions) -> str:
    """The judge `settings` name for a cascade's unsure claims; `ConfigError` if none is named
    or the cascade settings cannot work."""
    second = (settings.cascade_judge or "").strip()
    if not second:
        raise ConfigError(
            "--judge cascade needs the judge for uncertain claims: --cascade-judge "
            "PROVIDER:MODEL (or cascade-judge in vera.toml)"
        )
    if second.lower() == "cascade":
        raise ConfigError("--cascade-judge cannot itself be cascade")
    if settings.cascade_low > settings.cascade_high:
        raise ConfigError(
            f"--cascade-low ({settings.cascade_low}) must not exceed "
            f"--cascade-high ({settings.cascade_high})"
        )
    return second


SharedLimits = Callable[[str, ProviderOptions], tuple[Limiter, CostLedger, ProviderHealth]]
"""`parts(spec, settings) -> (limiter, ledger, health)`: what every managed model built inside a
`shared_limits` block is limited, charged and checked for a dead provider by, in place of its
own."""

_SHARED_LIMITS: ContextVar[SharedLimits | None] = ContextVar("vera_shared_limits", default=None)


@contextmanager
def shared_limits(parts: SharedLimits) -> Iterator[None]:
    """Inside this block, `create_managed_model` (and so `create_judge`) takes each model's
    limiter, ledger and health check from `parts`: how an executor's worker processes share
    one rate limit, one budget and one fail-fast count (see `vera._run._ray`)."""
    token = _SHARED_LIMITS.set(parts)
    try:
        yield
    finally:
        _SHARED_LIMITS.reset(token)


def _limits(
    spec: str, settings: ProviderOptions, ledger: CostLedger | None
) -> tuple[Limiter, CostLedger, ProviderHealth]:
    shared = _SHARED_LIMITS.get()
    if shared is not None:
        if settings.batch:
            raise ConfigError("--batch runs on the local executor: drop --executor ray")
        limiter, shared_ledger, health = shared(spec, settings)
        return limiter, ledger or shared_ledger, health
    if settings.batch:
        # A batched request waits in a slot until its batch ends; the batch API has its own
        # queue limits, so the interactive rate limits do not apply.
        limiter = Limiter(concurrency=settings.batch_size)
        ledger = ledger or CostLedger(max_cost=settings.max_cost, batch=True)
    else:
        limiter = Limiter(
            concurrency=settings.provider_concurrency,
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
        )
    health = ProviderHealth(spec, settings.fail_fast)
    return limiter, ledger or CostLedger(max_cost=settings.max_cost), health


def create_managed_model(
    spec: str,
    settings: JudgeOptions | None = None,
    *,
    ledger: CostLedger | None = None,
    base_url: str | None = None,
) -> ManagedChatModel:
    """The chat model `spec` ("PROVIDER:MODEL") names, wrapped once with retries, limits, the
    response cache and cost accounting as `settings` say; `ledger` shares one budget.
    `base_url` defaults to the judge's."""
    settings = settings or JudgeOptions()
    if settings.batch:
        check_batch_provider(spec)
    url = base_url or settings.judge_base_url
    # A model on this machine: its defaults (one call at a time, minutes a call) unless set.
    settings = settings.model_copy(update=local_defaults(settings, spec, url))
    model: ChatModel = create_chat_model(spec.strip(), base_url=url, output=settings.judge_output)
    if settings.batch:
        model = BatchingChatModel(
            model,
            window=settings.batch_window,
            max_size=settings.batch_size,
            poll=settings.batch_poll,
            retry=settings.batch_retry,
        )
    limiter, ledger, health = _limits(spec.strip(), settings, ledger)
    return ManagedChatModel(
        model,
        retry=RetryPolicy(max_attempts=settings.retries + 1),
        timeout=BATCH_WAIT if settings.batch else settings.timeout,
        readiness=None
        if settings.batch
        else readiness_for(spec, url, fail_fast=settings.fail_fast),
        health=health,
        limiter=limiter,
        cache=(
            ResponseCache(settings.cache_path, lock_timeout=settings.lock_timeout)
            if settings.cache
            else None
        ),
        ledger=ledger,
    )
