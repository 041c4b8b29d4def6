"""Chat models by spec, "PROVIDER:MODEL", for the CLI and config files.

Adapters are imported only when chosen, so a missing SDK matters only to those who pick it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from vera.errors import ConfigError
from vera.providers.base import ChatModel

__all__ = ["PROVIDERS", "create_chat_model"]

PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("vera.providers.openai", "OpenAIChatModel"),
    "anthropic": ("vera.providers.anthropic", "AnthropicChatModel"),
}
"""Provider name → (module, class) of its adapter."""


def create_chat_model(
    spec: str, *, base_url: str | None = None, api_key: str | None = None
) -> ChatModel:
    """Build a model from a spec such as "openai:gpt-4o-mini" or "anthropic:claude-sonnet-4-5".

    Only the first ":" separates, so "openai:llama3.1:8b" (an Ollama tag) works.
    """
    provider, sep, model = spec.strip().partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    known = ", ".join(sorted(PROVIDERS))
    if not sep or not model:
        raise ConfigError(
            f"model spec {spec!r} must look like PROVIDER:MODEL, e.g. openai:gpt-4o-mini "
            f"(providers: {known})"
        )
    if provider not in PROVIDERS:
        raise ConfigError(f"unknown provider {provider!r} in {spec!r}; available: {known}")
    module_name, class_name = PROVIDERS[provider]
    factory = cast(
        "Callable[..., ChatModel]", getattr(importlib.import_module(module_name), class_name)
    )
    return factory(model, base_url=base_url, api_key=api_key)
