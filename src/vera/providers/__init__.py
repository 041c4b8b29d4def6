"""LLM providers: thin adapters over the official SDKs, behind one `ChatModel` protocol."""

from vera.providers._anthropic import AnthropicChatModel
from vera.providers._base import (
    AuthenticationError,
    BadRequestError,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    MissingExtraError,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitError,
    RateLimitInfo,
    RetryableProviderError,
    TruncatedOutputError,
    UnreadableReplyError,
    Usage,
)
from vera.providers._batch import (
    BatchingChatModel,
    BatchResults,
    BatchStatus,
    Unanswered,
    batch_journal,
    describe_batches,
)
from vera.providers._cache import ResponseCache, cache_key
from vera.providers._cost import (
    DEFAULT_PRICES,
    BudgetExceededError,
    CostLedger,
    Price,
    PriceTable,
    merge_summaries,
)
from vera.providers._fake import FakeChatModel
from vera.providers._health import ProviderHealth, failure_cause
from vera.providers._http import is_local_url, rate_limit_info, retry_after_seconds
from vera.providers._jsonparse import (
    IncompleteJSONError,
    MalformedJSONError,
    parse_json_object,
    try_parse_json_object,
)
from vera.providers._limits import Limiter
from vera.providers._litellm import LiteLLMChatModel, use_local_cost_map
from vera.providers._managed import CHARS_PER_TOKEN, ManagedChatModel
from vera.providers._openai import (
    OllamaChatModel,
    OpenAIChatModel,
    OutputModeRefusedError,
    StructuredMode,
)
from vera.providers._options import ProviderOptions
from vera.providers._ready import (
    LOCAL_DEFAULTS,
    ServerReadiness,
    local_defaults,
    readiness_for,
    serves_locally,
)
from vera.providers._registry import PROVIDER_REGISTRY, create_chat_model, provider_names
from vera.providers._retry import RetryPolicy, call_with_retries

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_PRICES",
    "LOCAL_DEFAULTS",
    "PROVIDER_REGISTRY",
    "AnthropicChatModel",
    "AuthenticationError",
    "BadRequestError",
    "BatchResults",
    "BatchStatus",
    "BatchingChatModel",
    "BudgetExceededError",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "CostLedger",
    "FakeChatModel",
    "IncompleteJSONError",
    "Limiter",
    "LiteLLMChatModel",
    "MalformedJSONError",
    "ManagedChatModel",
    "Message",
    "MissingExtraError",
    "ModelNotFoundError",
    "OllamaChatModel",
    "OpenAIChatModel",
    "OutputModeRefusedError",
    "Price",
    "PriceTable",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHealth",
    "ProviderOptions",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "RateLimitError",
    "RateLimitInfo",
    "ResponseCache",
    "RetryPolicy",
    "RetryableProviderError",
    "ServerReadiness",
    "StructuredMode",
    "TruncatedOutputError",
    "Unanswered",
    "UnreadableReplyError",
    "Usage",
    "batch_journal",
    "cache_key",
    "call_with_retries",
    "create_chat_model",
    "describe_batches",
    "failure_cause",
    "is_local_url",
    "local_defaults",
    "merge_summaries",
    "parse_json_object",
    "provider_names",
    "rate_limit_info",
    "readiness_for",
    "retry_after_seconds",
    "serves_locally",
    "try_parse_json_object",
    "use_local_cost_map",
]
