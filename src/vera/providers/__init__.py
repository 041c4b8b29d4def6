"""LLM providers: thin adapters over the official SDKs, behind one `ChatModel` protocol."""

from vera.providers.base import (
    AuthenticationError,
    BadRequestError,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    MissingExtraError,
    ModelNotFoundError,
    ProviderError,
    RateLimitError,
    RetryableProviderError,
    TruncatedOutputError,
    Usage,
)
from vera.providers.registry import PROVIDER_REGISTRY, create_chat_model, provider_names

__all__ = [
    "PROVIDER_REGISTRY",
    "AuthenticationError",
    "BadRequestError",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Message",
    "MissingExtraError",
    "ModelNotFoundError",
    "ProviderError",
    "RateLimitError",
    "RetryableProviderError",
    "TruncatedOutputError",
    "Usage",
    "create_chat_model",
    "provider_names",
]
