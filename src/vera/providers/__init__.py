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

__all__ = [
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
]
