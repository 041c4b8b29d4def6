"""`JudgeOptions`: what builds a judge from its spec, defined beside the judges.

`vera.judges._registry` builds judges (and the managed models of LLM judges) from these; it takes
a `JudgeOptions`, not `vera._plan.Settings`, so the judges never import the settings layer
above them. `Settings` composes this model, so a run's settings are judge options as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from vera.judges._cascade import DEFAULT_HIGH, DEFAULT_LOW
from vera.providers._options import ProviderOptions


class JudgeOptions(ProviderOptions):
    """The judge settings of a run, and the provider settings of its LLM judges."""

    judge: str = "offline"
    """"offline", "nli:PATH_OR_HUB_ID", "cascade", or PROVIDER:MODEL such as
    "openai:gpt-4o-mini"."""
    judge_base_url: str | None = None
    """The provider's base URL, for OpenAI-compatible servers (vLLM, Ollama, Azure…)."""
    judge_mode: Literal["batched", "per_claim", "truths", "single_call"] = "batched"
    """How an LLM judge splits the work into calls (see `vera.judges._llm`)."""
    judge_samples: int = Field(default=1, ge=1)
    """Verification draws per claim; above 1 the majority verdict is kept."""
    judge_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    judge_max_tokens: int = Field(default=2048, ge=16)
    """The reply budget of one judge call; a reply cut off at it is split into smaller calls."""
    judge_prompts_dir: Path | None = None
    """A folder of prompt files that replace the bundled ones of the same name."""
    judge_batch_rubrics: bool = True
    """Ask rubric items in the call that verifies the same sample's claims (batched mode,
    one draw, rubrics without `reference`), so the contexts are sent once; False: a call
    per rubric and sample."""
    judge_replies: Literal["auto", "compact", "reasoned"] = "auto"
    """The bundled prompt set an LLM judge asks in: "compact" replies (the cheapest, for hosted
    models), "reasoned" ones (what the context says before each verdict, for small models), or
    "auto": reasoned for a model served on this machine, compact for any other."""
    cascade_judge: str | None = None
    """With `judge = "cascade"`: the judge (PROVIDER:MODEL) for claims the offline judge is
    unsure of."""
    cascade_low: float = Field(default=DEFAULT_LOW, ge=0.0, le=1.0)
    """An offline entailment probability at most this decides the claim offline."""
    cascade_high: float = Field(default=DEFAULT_HIGH, ge=0.0, le=1.0)
    """An offline entailment probability at least this decides the claim offline."""
    offline_min_support: float | None = Field(default=None, ge=0.0, le=1.0)
    """With `judge = "offline:learned"`: the least P(supported) that counts as FULLY_SUPPORTED
    for a claim words alone do not settle; None keeps the shipped model's threshold."""
    language: str | None = None
    """The offline judge reads every sample in this language (ISO 639-1, one of those
    docs/languages.md lists) instead of identifying each sample's; None identifies."""
