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
from vera.providers._cost import BudgetExceededError, Price, PriceTable
from vera.providers._fake import FakeChatModel
from vera.providers._managed import ManagedChatModel
from vera.providers._openai import OutputModeRefusedError, StructuredMode
from vera.providers._options import ProviderOptions
from vera.providers._ready import local_defaults
from vera.providers._registry import PROVIDER_REGISTRY, create_chat_model

__all__ = [
    "PROVIDER_REGISTRY",
    "AuthenticationError",
    "BadRequestError",
    "BudgetExceededError",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "FakeChatModel",
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
    "StructuredMode",
    "TruncatedOutputError",
    "Usage",
    "create_chat_model",
    "local_defaults",
]
