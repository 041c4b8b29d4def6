"""Chat models by spec, "PROVIDER:MODEL", for the CLI and config files.

Adapters are registered as lazy "module:Class" strings on the shared `vera._registry.Registry`,
so an adapter (and its SDK) is imported only when chosen and a missing SDK matters only to those
who pick it. Installed packages add providers under the `vera.providers` entry-point group: the
entry point's name is the provider name and its object a factory called as
`factory(model, base_url=..., api_key=...)` that returns a `ChatModel`.
"""

from __future__ import annotations

from collections.abc import Callable

from vera._registry import Registry
from vera._types._errors import ConfigError
from vera.providers._base import ChatModel

ENTRY_POINT_GROUP = "vera.providers"
"""Packages can offer chat-model providers under this entry-point group."""

ChatModelFactory = Callable[..., ChatModel]
"""`factory(model, *, base_url=None, api_key=None) -> ChatModel`: an adapter class or function."""

PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("vera.providers._openai", "OpenAIChatModel"),
    "anthropic": ("vera.providers._anthropic", "AnthropicChatModel"),
    "litellm": ("vera.providers._litellm", "LiteLLMChatModel"),
    "ollama": ("vera.providers._openai", "OllamaChatModel"),
}
"""Built-in provider name → (module, class) of its adapter."""

_CHOOSES_OUTPUT = ("openai", "ollama", "litellm")
"""The providers whose way of asking for JSON `--judge-output` chooses (`response_format`)."""

PROVIDER_REGISTRY: Registry[ChatModelFactory] = Registry("provider", ENTRY_POINT_GROUP)
"""Every provider by name: the built-in adapters and installed plugins."""

for _name, (_module, _class) in PROVIDERS.items():
    PROVIDER_REGISTRY.register(_name, f"{_module}:{_class}")


def provider_names() -> list[str]:
    """Every provider name, built-ins first, then plugins by name."""
    return PROVIDER_REGISTRY.names()


def create_chat_model(
    spec: str, *, base_url: str | None = None, api_key: str | None = None, output: str = "auto"
) -> ChatModel:
    """Build a model from a spec such as "openai:gpt-4o-mini" or "anthropic:claude-sonnet-4-5".

    Only the first ":" separates, so "openai:llama3.1:8b" (an Ollama tag) works. An unknown
    provider raises `ConfigError` suggesting the closest known one. `output` other than "auto"
    ("schema", "json", "prompt": `--judge-output`) fixes how an OpenAI-compatible provider asks
    for JSON; other providers have one way, and refuse it.
    """
    provider, sep, model = spec.strip().partition(":")
    model = model.strip()
    if not sep or not model or not provider.strip():
        known = ", ".join(sorted(provider_names()))
        raise ConfigError(
            f"model spec {spec!r} must look like PROVIDER:MODEL, e.g. openai:gpt-4o-mini "
            f"(providers: {known})"
        )
    factory = PROVIDER_REGISTRY.find(provider)
    if factory is None:
        raise PROVIDER_REGISTRY.unknown(provider, within=spec)
    if output == "auto":
        return factory(model, base_url=base_url, api_key=api_key)
    if provider.strip() not in _CHOOSES_OUTPUT:
        raise ConfigError(
            f"--judge-output {output} applies to OpenAI-compatible providers "
            f"({', '.join(_CHOOSES_OUTPUT)}), not {provider.strip()}: leave it unset"
        )
    from vera.providers._openai import structured_mode

    return factory(model, base_url=base_url, api_key=api_key, structured=structured_mode(output))
