from pathlib import Path

import pytest

from vera import ConfigError, Settings, load_settings
from vera._plan import SampleLimitOptions
from vera.judges import JudgeOptions
from vera.providers import ProviderOptions

WHITEBOX = "the plan's own parts (settings table, resume, limits)"


def test_defaults_when_nothing_is_configured(tmp_path: Path) -> None:
    assert load_settings(directory=tmp_path, environ={}) == Settings()
    assert Settings().judge == "offline" and Settings().cache is True


def test_layers_merge_file_then_environment_then_flags(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text(
        'judge = "openai:gpt-4o-mini"\nmax-cost = 2.5\nconcurrency = 4\n'
    )
    from_file = load_settings(directory=tmp_path, environ={})
    assert (from_file.judge, from_file.max_cost, from_file.concurrency) == (
        "openai:gpt-4o-mini",
        2.5,
        4,
    )
    env = {"VERA_JUDGE": "anthropic:claude-sonnet-4-5", "VERA_JUDGE_BASE_URL": "http://x"}
    from_env = load_settings(directory=tmp_path, environ=env)
    assert from_env.judge == "anthropic:claude-sonnet-4-5"
    assert from_env.judge_base_url == "http://x" and from_env.max_cost == 2.5
    flags = load_settings(
        {"judge": "offline", "concurrency": None}, directory=tmp_path, environ=env
    )
    assert flags.judge == "offline" and flags.concurrency == 4  # None = flag not given


def test_pyproject_tool_vera_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.vera]\ncache = false\n')
    assert load_settings(directory=tmp_path, environ={}).cache is False


def test_vera_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.vera]\njudge = "openai:a"\n')
    (tmp_path / "vera.toml").write_text('judge = "openai:b"\n')
    assert load_settings(directory=tmp_path, environ={}).judge == "openai:b"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("judg = 'offline'\n", r"vera.toml: setting 'judg': extra inputs"),
        ("concurrency = 0\n", r"vera.toml: setting 'concurrency': input should be greater"),
        ("judge = \n", r"vera.toml: invalid TOML"),
        # Checks that live with the components' own options models, still named by key.
        ("max-response-chars = 0\n", r"setting 'max_response_chars': input should be greater"),
        ("timeout = 0\n", r"vera.toml: setting 'timeout': input should be greater"),
        ("cascade-low = 2\n", r"vera.toml: setting 'cascade_low': input should be less"),
        ("judge-mode = 'all'\n", r"vera.toml: setting 'judge_mode': input should be"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "vera.toml").write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_settings(directory=tmp_path, environ={})


def test_settings_compose_the_components_options_with_their_flat_keys(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text(
        "sample-timeout = 2.5\nretries = 1\ncascade-high = 0.8\nlock-timeout = 4\n"
    )
    settings = load_settings(directory=tmp_path, environ={})
    # A run's settings are each component's options as they are: no copy to keep in step.
    assert isinstance(settings, JudgeOptions) and isinstance(settings, SampleLimitOptions)
    assert isinstance(settings, ProviderOptions)
    assert (settings.sample_timeout, settings.retries) == (2.5, 1)
    assert (settings.cascade_high, settings.lock_timeout) == (0.8, 4.0)
