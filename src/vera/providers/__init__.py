"""LLM providers: thin adapters over the official SDKs, behind one `ChatModel` protocol."""

from vera.providers._base import (
    AuthenticationError,
    BadRequestError,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitError,
    RetryableProviderError,
    TruncatedOutputError,
    Usage,
)
from vera.providers._cost import Price, PriceTable
from vera.providers._managed import ManagedChatModel
from vera.providers._openai import OutputModeRefusedError
from vera.providers._options import ProviderOptions
from vera.providers._registry import PROVIDER_REGISTRY, create_chat_model

__all__ = [
    "PROVIDER_REGISTRY",
    "AuthenticationError",
    "BadRequestError",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "ManagedChatModel",
    "Message",
    "ModelNotFoundError",
    "OutputModeRefusedError",
    "Price",
    "PriceTable",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderOptions",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "RateLimitError",
    "RetryableProviderError",
    "TruncatedOutputError",
    "Usage",
    "create_chat_model",
]
