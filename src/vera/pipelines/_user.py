"""Your own RAG system as a pipeline: a Python callable, or an HTTP endpoint.

`--pipeline module:function` imports `function`, which takes the query and returns (or
awaits) the answer: a string, or a mapping with `response` (or `answer`) and `contexts` (or
`retrieved_contexts`: strings or {text, id, source} objects). `--pipeline URL` POSTs
`{"query": ...}` as JSON and reads the same mapping from the reply. `module:object` may also
name a LangChain Runnable or a LlamaIndex query engine (`vera.pipelines._frameworks`).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from vera._json import JsonRefused, loads_bounded
from vera._types import Context
from vera._types._errors import ConfigError
from vera.pipelines._core import Pipeline, RagState

_RESPONSE_KEYS = ("response", "answer", "output")
_CONTEXT_KEYS = ("contexts", "retrieved_contexts", "retrieval_context", "sources")


class UserPipelineError(Exception):
    """The user's pipeline answered with something VERA cannot read."""


def load_user_pipeline(spec: str, *, timeout: float = 60.0) -> Pipeline:
    """The pipeline `spec` names: "package.module:function" or an http(s) URL."""
    if spec.startswith(("http://", "https://")):
        return Pipeline.of(_HttpPipeline(spec, timeout), name=spec)
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"pipeline {spec!r}: use module:function or an http(s) URL")
    module = import_user_module(spec, module_name)
    found = _pipeline_of(getattr(module, attribute, None), spec)
    if found is None:
        raise ConfigError(
            f"pipeline {spec!r}: {module_name} has no callable {attribute!r} (a function, a "
            "LangChain Runnable or a LlamaIndex query engine)"
        )
    return found


def as_pipeline(target: object, *, name: str | None = None) -> Pipeline:
    """`target` as a pipeline: a `Pipeline` as it is, a LangChain Runnable or LlamaIndex query
    engine through its adapter, or a callable that takes the query (see the module's doc).

    Raises:
        ConfigError: `target` is none of these, or its framework is not installed.
    """
    found = _pipeline_of(target, name)
    if found is None:
        raise ConfigError(
            f"pipeline {name or type(target).__name__}: not a Pipeline, a function, a "
            "LangChain Runnable or a LlamaIndex query engine"
        )
    return found


def _pipeline_of(target: object, name: str | None) -> Pipeline | None:
    # Imported here: the adapters build on this module's UserPipelineError.
    from vera.pipelines._frameworks import framework_pipeline

    if isinstance(target, Pipeline):
        return target if name is None else target.renamed(name)
    adapted = framework_pipeline(target, name=name)
    if adapted is not None or not callable(target):
        return adapted
    label = name or str(getattr(target, "__name__", type(target).__name__))
    return Pipeline.of(_CallablePipeline(target), name=label)


def import_user_module(spec: str, module_name: str, *, what: str = "pipeline") -> Any:
    """Import the module, looking in the current folder first, as `python -m` would: a user's
    `my_rag.py` beside their data is what `--pipeline my_rag:answer` means. `what` names the
    thing `spec` is in the errors ("pipeline", "assistant")."""
    here = str(Path.cwd())
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.split(".")[0] != exc.name.split(".")[0]:
            raise ConfigError(
                f"{what} {spec!r}: {module_name} imports {exc.name!r}, which is not installed"
            ) from None
        raise ConfigError(
            f"{what} {spec!r}: no module {module_name!r} in the current folder ({here}) or "
            "on the Python path; run vera from the folder that holds it, add its folder to "
            "PYTHONPATH, or install it (pip install -e .)"
        ) from None
    except ImportError as exc:
        raise ConfigError(f"{what} {spec!r}: cannot import {module_name!r} ({exc})") from None


class _CallablePipeline:
    def __init__(self, function: Callable[[str], Any]) -> None:
        self.function = function
        self.name = getattr(function, "__name__", "pipeline")

    async def __call__(self, state: RagState) -> RagState:
        result = self.function(state.query)
        if inspect.isawaitable(result):
            result = await result
        return _read_answer(state, result)


class _HttpPipeline:
    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        self.name = "http"

    async def __call__(self, state: RagState) -> RagState:
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            reply = await client.post(self.url, json={"query": state.query})
        if reply.status_code >= 400:
            raise UserPipelineError(f"{self.url} answered HTTP {reply.status_code}")
        try:
            body = loads_bounded(reply.text)
        except JsonRefused as exc:  # NaN, a key twice, nesting without end
            raise UserPipelineError(f"{self.url} answered JSON VERA does not read: {exc}") from None
        except ValueError:
            raise UserPipelineError(f"{self.url} did not answer with JSON") from None
        return _read_answer(state, body)


def _read_answer(state: RagState, result: Any) -> RagState:
    if isinstance(result, str):
        return state.evolve(response=result)
    if not isinstance(result, Mapping):
        raise UserPipelineError(
            f"a pipeline must return a string or a mapping, got {type(result).__name__}"
        )
    response = next((result[k] for k in _RESPONSE_KEYS if k in result), None)
    if not isinstance(response, str):
        raise UserPipelineError(f"the pipeline's answer has no string {'/'.join(_RESPONSE_KEYS)}")
    raw: Any = next((result[k] for k in _CONTEXT_KEYS if k in result), [])
    if not isinstance(raw, list):
        raise UserPipelineError("the pipeline's contexts must be a list")
    contexts = tuple(
        Context(text=c) if isinstance(c, str) else Context.model_validate(c) for c in raw
    )
    return state.evolve(response=response, contexts=contexts)
