"""Prompts as versioned data files that users can override.

A prompt file is TOML with `version`, `system` and `user`; `$name` placeholders in `user` are
filled per call. The version goes into every result and every cache key, so changing a prompt
never serves a stale cached reply.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from string import Template

from vera.errors import ConfigError
from vera.providers.base import Message

__all__ = ["Prompt", "load_prompt"]


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt: its version and the messages it renders to."""

    name: str
    version: str
    system: str
    user: str

    def render(self, **values: str) -> tuple[Message, ...]:
        """System message, then the user message with `$placeholders` filled."""
        try:
            user = Template(self.user).substitute(values)
        except KeyError as exc:
            raise ConfigError(f"prompt {self.name!r} uses an unknown placeholder {exc}") from None
        return (Message(role="system", content=self.system), Message(role="user", content=user))


def load_prompt(name: str, prompts_dir: Path | None = None) -> Prompt:
    """Load `name`.toml from `prompts_dir` when it has one, else the bundled prompt."""
    user_file = prompts_dir / f"{name}.toml" if prompts_dir is not None else None
    if user_file is not None and user_file.exists():
        text = user_file.read_text(encoding="utf-8")
        origin = str(user_file)
    else:
        text = (files("vera.judges") / "prompts" / f"{name}.toml").read_text(encoding="utf-8")
        origin = f"bundled {name}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: invalid TOML ({exc})") from None
    missing = [key for key in ("version", "system", "user") if not isinstance(data.get(key), str)]
    if missing:
        raise ConfigError(f"{origin}: missing string field(s) {', '.join(missing)}")
    return Prompt(name=name, version=data["version"], system=data["system"], user=data["user"])
