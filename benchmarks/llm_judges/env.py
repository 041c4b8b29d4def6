"""Environment for every benchmark process: no telemetry, no update checks, no downloads.

This machine has no internet, and a benchmark must not try to reach it: a blocked call can
stall a framework and skew its timing. Imported for its side effect before any framework,
and passed to the subprocesses the driver starts.
"""

from __future__ import annotations

import os

from tokens import DEFAULT_CACHE

OFFLINE_ENV = {
    # DeepEval: telemetry, .env autoloading, the post-run "inspect" prompt, update checks.
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_NO_INSPECT_PROMPT": "1",
    # RAGAS usage tracking.
    "RAGAS_DO_NOT_TRACK": "true",
    # LangChain / LangSmith tracing (RAGAS and DeepEval import LangChain).
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    # Hugging Face hub and datasets (RAGAS imports `datasets`).
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    # Generic opt-outs honoured by several libraries; OpenTelemetry SDK off.
    "DO_NOT_TRACK": "1",
    "OTEL_SDK_DISABLED": "true",
    # tiktoken reads vocabularies from the seeded cache instead of downloading them.
    "TIKTOKEN_CACHE_DIR": str(DEFAULT_CACHE),
    # A dummy key: some clients refuse to start without one; the server ignores it.
    "OPENAI_API_KEY": "sk-bench",
    "ANTHROPIC_API_KEY": "sk-ant-bench",
}


def apply() -> None:
    """Set the variables in this process, over any the caller had set."""
    os.environ.update(OFFLINE_ENV)


apply()
