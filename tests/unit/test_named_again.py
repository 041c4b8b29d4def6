"""`vera._plan.named_again`: what a stored plan names that would run code is used only when the
user names it again, with the same value."""

from __future__ import annotations

from typing import Any

import pytest

from vera import ConfigError, RunPlan, Settings
from vera._plan import DatasetRef, build_plan, code_references, named_again, resume_command

WHITEBOX = "the plan's own parts (settings table, resume, limits)"


def plan_with(settings: Settings | None = None, **fields: Any) -> RunPlan:
    settings = settings or Settings()
    return build_plan(dataset=DatasetRef(source="d.jsonl"), settings=settings, **fields)


def test_builtin_names_choose_no_code() -> None:
    plan = plan_with(
        pipeline="naive-rag",
        baselines=("naive-rag", "vera"),
        settings=Settings(judge="offline"),
    )
    assert code_references(plan) == {}
    assert named_again(plan, {}, "r1") == plan


def test_a_provider_judge_on_its_public_host_is_named_again() -> None:
    # Where the key goes: a history edited to another provider, or without its base URL,
    # must not send a key to a public host unless the user names the judge.
    plan = plan_with(settings=Settings(judge="openai:gpt-4o-mini"))
    assert code_references(plan) == {"judge": "openai:gpt-4o-mini"}
    with pytest.raises(ConfigError, match="--judge: stored 'openai:gpt-4o-mini', not given"):
        named_again(plan, {}, "r1")
    assert named_again(plan, {"judge": "openai:gpt-4o-mini"}, "r1") == plan
    with pytest.raises(ConfigError, match="given 'anthropic:claude-haiku-4-5'"):
        named_again(plan, {"judge": "anthropic:claude-haiku-4-5"}, "r1")
    served = plan_with(settings=Settings(judge="openai:m", judge_base_url="http://127.0.0.1:1/v1"))
    assert code_references(served) == {"judge_base_url": "http://127.0.0.1:1/v1"}


def test_every_kind_of_code_is_listed() -> None:
    settings = Settings(judge="nli:/models/x", judge_prompts_dir="p", ray_address="ray://h:1")
    plan = plan_with(pipeline="my_rag:answer", baselines=("naive-rag", "b:c"), settings=settings)
    assert code_references(plan) == {
        "pipeline": "my_rag:answer",
        "baselines": "naive-rag, b:c",
        "prompts_dir": "p",
        "judge": "nli:/models/x",
        "ray_address": "ray://h:1",
    }
    with pytest.raises(ConfigError) as refused:
        named_again(plan, {"pipeline": "my_rag:answer", "prompts_dir": "p"}, "r1")
    message = str(refused.value)
    assert "--pipeline" not in message  # named again, the same
    assert "--baseline: stored 'naive-rag, b:c', not given" in message
    assert "--judge: stored 'nli:/models/x', not given" in message
    named = {
        "pipeline": "my_rag:answer",
        "baselines": ["naive-rag", "b:c"],
        "prompts_dir": "p",
        "judge": "nli:/models/x",
        "ray_address": "ray://h:1",
    }
    assert named_again(plan, named, "r1") == plan
    command = resume_command(plan, "r1")
    assert command.startswith("vera eval --resume r1 --pipeline my_rag:answer ")
    assert "--baseline naive-rag --baseline b:c --prompts-dir p" in command


def test_a_value_given_again_must_equal_the_stored_one() -> None:
    plan = plan_with(settings=Settings(judge="offline"))
    with pytest.raises(ConfigError, match="--judge: stored 'offline', given 'openai:x'"):
        named_again(plan, {"judge": "openai:x"}, "r1")
    with pytest.raises(ConfigError, match="--pipeline: stored None, given 'a:b'"):
        named_again(plan, {"pipeline": "a:b"}, "r1")
    assert named_again(plan, {"judge": "offline", "metrics": ["Faithfulness"]}, "r1") == plan


def test_a_redacted_pipeline_url_is_taken_as_given() -> None:
    url = "http://127.0.0.1:9/rag?api_key=s3cret-value"
    stored = plan_with(pipeline="http://127.0.0.1:9/rag?api_key=***")
    resumed = named_again(stored, {"pipeline": url}, "r1")
    assert resumed.pipeline == url
    with pytest.raises(ConfigError, match="not given"):
        named_again(stored, {}, "r1")


def test_a_hostile_stored_value_is_shown_escaped_and_short() -> None:
    plan = plan_with(pipeline="evil:x\x1b[31m" + "a" * 5_000)
    with pytest.raises(ConfigError) as refused:
        named_again(plan, {}, "r1")
    message = str(refused.value)
    assert "\x1b" not in message and "\\x1b" in message
    assert len(message) < 600
    assert named_again(plan_with(baselines=("b:c",)), {"baselines": "b:c"}, "r").baselines == (
        "b:c",
    )
