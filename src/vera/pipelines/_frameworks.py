"""LangChain Runnables and LlamaIndex query engines as pipelines.

`--pipeline my_rag:chain` (or `vera.evaluate(..., pipeline=chain)`) accepts, beside a function:

- a LangChain `Runnable`, given the query (`ainvoke`, else `invoke` in a thread). Its output is
  the answer as a string or a message, or a dict with the answer under `answer`, `output`,
  `result`, `response` or `text` and the retrieved documents under `source_documents`,
  `context`, `documents` or `contexts` (LangChain `Document`s or strings);
- a LlamaIndex query engine (`aquery`, else `query` in a thread): `Response.response` is the
  answer and its `source_nodes` the contexts.

Each document or node becomes a `Context` with an id (metadata `id`/`doc_id`, else the
document's or node's own id, else its `source`) and a source (metadata `source`, `file_path`,
`file_name` or `url`), so citations resolve against them. Their metadata (and a node's score)
is the context's `metadata`, so it reaches the report.

Objects are recognised by their classes' modules and by duck typing, so neither framework is
imported unless such an object is given.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from vera._types import Context
from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera.pipelines._core import Pipeline, RagState
from vera.pipelines._user import UserPipelineError

LANGCHAIN_INSTALL = install_hint("langchain")
LLAMAINDEX_INSTALL = install_hint("llamaindex")

_ANSWER_KEYS = ("answer", "output", "result", "response", "text")
_SOURCE_KEYS = ("source_documents", "context", "documents", "contexts", "source_nodes")
_ID_KEYS = ("id", "doc_id", "document_id")
_SOURCE_META_KEYS = ("source", "file_path", "file_name", "url")


def framework_pipeline(target: object, *, name: str | None = None) -> Pipeline | None:
    """A pipeline around `target` when it is a LangChain Runnable or a LlamaIndex query
    engine; None for anything else (a plain function is left to the caller).

    Raises:
        ConfigError: `target` looks like one of them but its framework cannot be imported.
    """
    kind = _framework_of(target)
    if kind == "langchain":
        _require("langchain_core", "LangChain", LANGCHAIN_INSTALL)
        step: _Adapter = _RunnableStep(target)
    elif kind == "llamaindex":
        _require("llama_index.core", "LlamaIndex", LLAMAINDEX_INSTALL)
        step = _QueryEngineStep(target)
    else:
        return None
    return Pipeline.of(step, name=name or step.name)


def _framework_of(target: object) -> str | None:
    """Which framework `target` belongs to, from its classes' modules, else its methods.

    A callable that is neither framework's class stays a plain function even if it happens
    to have an `invoke` or `query` method: that is what `module:function` always meant.
    """
    roots = {str(getattr(cls, "__module__", "")).split(".")[0] for cls in type(target).__mro__}
    if roots & {"langchain_core", "langchain", "langchain_community"} and _has(
        target, "ainvoke", "invoke"
    ):
        return "langchain"
    if "llama_index" in roots and _has(target, "aquery", "query"):
        return "llamaindex"
    if callable(target):
        return None
    if _has(target, "ainvoke", "invoke"):
        return "langchain"
    if _has(target, "aquery", "query"):
        return "llamaindex"
    return None


def _has(target: object, *methods: str) -> bool:
    return any(callable(getattr(target, method, None)) for method in methods)


def _require(module: str, framework: str, install: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"this pipeline looks like a {framework} object, but {module} cannot be imported "
            f"({exc}); install it with {install}"
        ) from None


class _Adapter(ABC):
    """Calls the framework's async method when it has one, else its sync one in a thread, so
    a slow blocking chain does not stall the other samples' judge calls."""

    framework = ""

    def __init__(self, target: Any, async_method: str, sync_method: str) -> None:
        self.target = target
        self.name = f"{self.framework}:{type(target).__name__}"
        self._async = getattr(target, async_method, None)
        self._sync = getattr(target, sync_method, None)

    async def _call(self, query: str) -> Any:
        if callable(self._async):
            result = self._async(query)
            return await result if inspect.isawaitable(result) else result
        if not callable(self._sync):
            raise UserPipelineError(f"{self.name} has no method to call")
        result = await asyncio.to_thread(self._sync, query)
        return await result if inspect.isawaitable(result) else result

    @abstractmethod
    async def __call__(self, state: RagState) -> RagState:
        """The state with the framework's answer and retrieved contexts."""


class _RunnableStep(_Adapter):
    framework = "langchain"

    def __init__(self, target: Any) -> None:
        super().__init__(target, "ainvoke", "invoke")

    async def __call__(self, state: RagState) -> RagState:
        output = await self._call(state.query)
        sources: Any = ()
        if isinstance(output, Mapping):
            answer = next((_text_of(output[k]) for k in _ANSWER_KEYS if k in output), None)
            sources = next((output[k] for k in _SOURCE_KEYS if k in output), ())
        else:
            answer = _text_of(output)
        if not answer or not answer.strip():
            raise UserPipelineError(
                f"the LangChain runnable {self.name} returned {_describe(output)} with no "
                f"answer: return a non-empty string, a message, or a dict with one of "
                f"{'/'.join(_ANSWER_KEYS)}"
            )
        return _answered(state, answer, sources)


class _QueryEngineStep(_Adapter):
    framework = "llamaindex"

    def __init__(self, target: Any) -> None:
        super().__init__(target, "aquery", "query")

    async def __call__(self, state: RagState) -> RagState:
        result = await self._call(state.query)
        if isinstance(result, str) and result.strip():
            return state.evolve(response=result)
        getter = getattr(result, "get_response", None)
        if getattr(result, "response", None) is None and callable(getter):
            # A streaming response holds its text only once drained.
            drained = getter()
            result = await drained if inspect.isawaitable(drained) else drained
        answer = getattr(result, "response", None)
        if not isinstance(answer, str) or not answer.strip():
            raise UserPipelineError(
                f"the LlamaIndex query engine {self.name} returned {_describe(result)} with "
                "no answer (its response is empty)"
            )
        return _answered(state, answer, getattr(result, "source_nodes", None) or ())


def _answered(state: RagState, answer: str, sources: Any) -> RagState:
    items = [sources] if isinstance(sources, str) or not _is_sequence(sources) else sources
    read = [_context_of(item) for item in items]
    contexts = tuple(
        context.model_copy(update={"metadata": _plain(meta)}) for context, meta in read
    )
    return state.evolve(response=answer, contexts=contexts)


def _plain(meta: Mapping[str, Any]) -> dict[str, Any]:
    """`meta` as JSON data (a date as its text), since it goes into the report."""
    plain: dict[str, Any] = json.loads(json.dumps(dict(meta), default=str))
    return plain


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _text_of(value: Any) -> str | None:
    """A string, or a chat message's text (content blocks joined); None for anything else."""
    if isinstance(value, str):
        return value
    content = getattr(value, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or (isinstance(block, Mapping) and "text" in block)
        ]
        return "".join(parts)
    return None


def _context_of(item: Any) -> tuple[Context, dict[str, Any]]:
    """A retrieved item as a context, with its metadata: a string, a LangChain `Document`, a
    LlamaIndex node (scored or not), or a mapping with `text` or `page_content`."""
    if isinstance(item, str):
        return Context(text=item), {}
    if hasattr(item, "page_content"):
        meta = dict(getattr(item, "metadata", None) or {})
        return _context(str(item.page_content), meta, getattr(item, "id", None)), meta
    node = getattr(item, "node", item)
    if callable(getattr(node, "get_content", None)):
        meta = dict(getattr(node, "metadata", None) or {})
        native = (getattr(node, "ref_doc_id", None), getattr(node, "node_id", None))
        context = _context(str(node.get_content()), meta, *native)
        score = getattr(item, "score", None)
        return context, meta if score is None else {**meta, "score": score}
    if isinstance(item, Mapping):
        text = item.get("text", item.get("page_content"))
        if isinstance(text, str):
            meta = dict(item.get("metadata") or {})
            return _context(text, {**meta, **item}, None), meta
    raise UserPipelineError(f"cannot read a retrieved context from {_describe(item)}")


def _context(text: str, meta: Mapping[str, Any], *native_ids: Any) -> Context:
    found = [meta.get(k) for k in _ID_KEYS] + list(native_ids)
    sources = [meta.get(k) for k in _SOURCE_META_KEYS]
    source = next((str(s) for s in sources if s not in (None, "")), None)
    given = next((str(i) for i in found if i not in (None, "")), None)
    return Context(text=text, id=given or source, source=source)


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        return f"a dict with keys {sorted(map(str, value))}"
    return f"a {type(value).__name__}"
