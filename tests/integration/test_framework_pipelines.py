"""LangChain Runnables and LlamaIndex query engines as pipelines: real chains and engines over
in-memory documents, with the frameworks' own fake chat model, mock LLM and mock embedding (no
network), judged by the offline judge."""

import json
import math
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without

pytest.importorskip("langchain_core", reason=without("langchain"))
pytest.importorskip("llama_index.core", reason=without("llamaindex"))

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import (
    RunnableLambda,
    RunnableParallel,
    RunnablePassthrough,
)
from llama_index.core import Document as LlamaDocument
from llama_index.core import PromptTemplate, VectorStoreIndex
from llama_index.core.embeddings.mock_embed_model import MockEmbedding
from llama_index.core.llms.mock import MockLLM
from llama_index.core.response_synthesizers.no_text import NoText

import vera
from vera import ConfigError, SampleResult, Verdict
from vera.pipelines._user import as_pipeline, load_user_pipeline

WHITEBOX = "the loader of a user's pipeline spec"

DOCS = Path(__file__).parents[2] / "docs"
FACT = "The refund window is 30 days from delivery."
OTHER = "Shipping is free on orders over 50 euros."
QUERY = "How long is the refund window?"


def sample(sample_id: str = "refunds", query: str = QUERY) -> vera.Sample:
    return vera.Sample(id=sample_id, query=query, citations=["policy-refunds"])


def assert_quote_is_faithful(result: SampleResult) -> None:
    """A response that quotes its contexts: the offline judge finds every claim supported, so
    faithfulness (the seeds' share of supported claims) is 1.0, and gives each claim a high
    probability of support."""
    faithfulness = result.results["faithfulness"]
    assert result.claims and {c.verdict for c in result.claims} == {Verdict.FULLY_SUPPORTED}
    probabilities = [c.entailment for c in result.claims if c.entailment is not None]
    assert len(probabilities) == len(result.claims)
    assert math.prod(probabilities) >= 0.9
    assert faithfulness.score == 1.0 and faithfulness.passed is True


def retrieval_chain(answer: str = f"{FACT} [policy-refunds]") -> Any:
    """Retriever -> prompt -> fake chat model, returning the answer and the documents."""
    documents = [
        Document(page_content=FACT, id="policy-refunds", metadata={"source": "policy.md"}),
        Document(page_content=OTHER, metadata={"source": "shipping.md", "page": 2}),
    ]
    prompt = ChatPromptTemplate.from_template("{context}\n\nQ: {question}")
    to_prompt = RunnableLambda(
        lambda s: {
            "context": "\n".join(d.page_content for d in s["context"]),
            "question": s["question"],
        }
    )
    retrieve = RunnableParallel(
        context=RunnableLambda(lambda _: documents), question=RunnablePassthrough()
    )
    llm = FakeListChatModel(responses=[answer])
    return retrieve.assign(answer=to_prompt | prompt | llm | StrOutputParser())


def query_engine(**options: Any) -> Any:
    """A vector index over two documents. MockLLM echoes its prompt, and the prompt is the
    passages, each followed by its id in brackets: the answer quotes and cites them."""
    documents = [
        LlamaDocument(
            text=text,
            id_=doc_id,
            metadata={"ref": doc_id, "source": "policy.md"},
            excluded_llm_metadata_keys=["source"],
            metadata_template="[{value}]",
            text_template="{content} {metadata_str}",
        )
        for doc_id, text in (("policy-refunds", FACT), ("policy-shipping", OTHER))
    ]
    index = VectorStoreIndex.from_documents(documents, embed_model=MockEmbedding(embed_dim=8))
    template = PromptTemplate("{context_str}")
    return index.as_query_engine(
        llm=MockLLM(), similarity_top_k=2, text_qa_template=template, **options
    )


def test_a_langchain_chain_answers_with_its_documents_as_contexts() -> None:
    chain = retrieval_chain()
    report = vera.evaluate([sample()], ["faithfulness", "citation_accuracy"], pipeline=chain)
    result = report.samples[0]
    assert result.status.value == "scored", result.error
    assert result.response == f"{FACT} [policy-refunds]"
    # The document's own id first; a document without one is known by its source.
    assert [(c.id, c.source) for c in result.contexts] == [
        ("policy-refunds", "policy.md"),
        ("shipping.md", "shipping.md"),
    ]
    assert list(result.scores) == ["faithfulness", "citation_accuracy"]
    assert_quote_is_faithful(result)
    assert result.scores["citation_accuracy"] == 1.0
    assert result.results["citation_accuracy"].sub_scores["truth_recall"] == 1.0
    assert report.pipeline == "langchain:RunnableSequence"


async def test_the_metadata_travels_with_each_context_into_the_report() -> None:
    state = await as_pipeline(retrieval_chain()).run(QUERY)
    assert [c.metadata for c in state.contexts] == [
        {"source": "policy.md"},
        {"source": "shipping.md", "page": 2},
    ]
    report = await vera.aevaluate([{"id": "q", "query": QUERY}], pipeline=retrieval_chain())
    assert report.to_dict()["samples"][0]["contexts"][1]["metadata"]["page"] == 2


async def _async_answer(query: str) -> dict[str, Any]:
    return {"output": f"{FACT}", "documents": [FACT]}


@pytest.mark.parametrize(
    ("runnable", "contexts"),
    [
        (RunnableLambda(lambda q: FACT), 0),  # a string
        (ChatPromptTemplate.from_template("{q}") | FakeListChatModel(responses=[FACT]), 0),
        (RunnableLambda(lambda q: {"result": FACT, "source_documents": [Document(FACT)]}), 1),
        (RunnableLambda(lambda q: {"answer": FACT, "context": f"{FACT}\n{OTHER}"}), 1),
        (RunnableLambda(_async_answer), 1),  # an async function: ainvoke awaits it
        (RunnableLambda(lambda q: {"text": FACT, "contexts": [{"text": FACT, "id": "x"}]}), 1),
    ],
    ids=["string", "message", "result-dict", "context-string", "async", "text-dict"],
)
def test_strings_messages_and_dicts_are_read(runnable: Any, contexts: int) -> None:
    report = vera.evaluate([sample()], pipeline=runnable)
    result = report.samples[0]
    assert result.response == FACT and len(result.contexts) == contexts
    assert result.status.value == "scored", result.error


def test_an_object_with_only_a_sync_invoke_runs_in_a_thread() -> None:
    class SyncOnly:
        def __init__(self) -> None:
            self.threads: list[str] = []

        def invoke(self, query: str) -> dict[str, Any]:
            self.threads.append(threading.current_thread().name)
            return {"answer": FACT, "source_documents": [Document(FACT, metadata={"id": "d1"})]}

    runnable = SyncOnly()
    report = vera.evaluate([sample()], pipeline=runnable)
    assert report.samples[0].contexts[0].id == "d1"
    assert_quote_is_faithful(report.samples[0])
    assert runnable.threads and runnable.threads[0] != threading.main_thread().name


def test_a_failing_chain_fails_its_own_sample_only() -> None:
    def answer(query: str) -> str:
        if "boom" in query:
            raise ValueError("the retriever is down")
        return FACT

    chain = RunnableLambda(answer) | RunnablePassthrough()
    report = vera.evaluate([sample("ok"), sample("bad", "boom?")], pipeline=chain)
    ok, bad = report.samples
    assert ok.status.value == "scored"
    assert bad.status.value == "error"
    assert bad.error == "pipeline langchain:RunnableSequence: ValueError: the retriever is down"
    empty = vera.evaluate([sample()], pipeline=RunnableLambda(lambda q: {"question": q}))
    assert empty.samples[0].status.value == "error"
    assert "returned a dict with keys ['question'] with no answer" in (empty.samples[0].error or "")


def test_a_llamaindex_query_engine_answers_with_its_nodes() -> None:
    report = vera.evaluate(
        [sample()], ["faithfulness", "citation_accuracy"], pipeline=query_engine()
    )
    result = report.samples[0]
    assert result.status.value == "scored", result.error
    assert {c.text for c in result.contexts} == {FACT, OTHER}  # the text without metadata
    assert {(c.id, c.source) for c in result.contexts} == {
        ("policy-refunds", "policy.md"),
        ("policy-shipping", "policy.md"),
    }
    assert "[policy-refunds]" in (result.response or "")
    assert list(result.scores) == ["faithfulness", "citation_accuracy"]
    assert_quote_is_faithful(result)
    assert result.scores["citation_accuracy"] == 1.0
    assert result.results["citation_accuracy"].sub_scores["truth_recall"] == 1.0
    assert report.pipeline == "llamaindex:RetrieverQueryEngine"


async def test_a_query_engine_keeps_node_scores_and_streams() -> None:
    state = await as_pipeline(query_engine()).run(QUERY)
    assert all(
        "score" in c.metadata and c.metadata["source"] == "policy.md" for c in state.contexts
    )
    streamed = await as_pipeline(query_engine(streaming=True)).run(QUERY)
    # Equal mock embeddings tie every node, so the two runs may order them differently.
    assert set((streamed.response or "").splitlines()) == set((state.response or "").splitlines())
    assert len(streamed.contexts) == 2


def test_a_sync_only_engine_and_an_empty_response() -> None:
    class SyncEngine:
        def __init__(self) -> None:
            self.engine = query_engine()

        def query(self, query: str) -> Any:
            return self.engine.query(query)

    assert_quote_is_faithful(vera.evaluate([sample()], pipeline=SyncEngine()).samples[0])
    silent = vera.evaluate(
        [sample()], pipeline=query_engine(response_synthesizer=NoText(llm=MockLLM()))
    )
    assert silent.samples[0].status.value == "error"
    assert "LlamaIndex query engine llamaindex:RetrieverQueryEngine returned" in (
        silent.samples[0].error or ""
    )


def test_a_missing_framework_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    class LooksLikeARunnable:
        def invoke(self, query: str) -> str:
            return query

    class LooksLikeAnEngine:
        def query(self, query: str) -> str:
            return query

    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.setitem(sys.modules, "llama_index.core", None)
    with pytest.raises(ConfigError, match=re.escape("pip install 'vera-eval[langchain]'")):
        as_pipeline(LooksLikeARunnable())
    with pytest.raises(ConfigError, match=re.escape("pip install 'vera-eval[llamaindex]'")):
        as_pipeline(LooksLikeAnEngine())
    with pytest.raises(ConfigError, match="not a Pipeline, a function"):
        as_pipeline(42)


def test_module_object_loads_a_chain_and_refuses_other_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fw_chain_module.py").write_text(
        "from langchain_core.runnables import RunnableLambda\n"
        "chain = RunnableLambda(lambda q: 'An answer.')\n"
        "number = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        pipeline = load_user_pipeline("fw_chain_module:chain")
        assert pipeline.name == "fw_chain_module:chain"
        with pytest.raises(ConfigError, match="no callable 'number'"):
            load_user_pipeline("fw_chain_module:number")
    finally:
        sys.modules.pop("fw_chain_module", None)


def test_importing_vera_and_running_a_function_imports_no_framework() -> None:
    code = (
        "import sys, vera\n"
        "vera.evaluate([vera.Sample(id='a', query='q')], pipeline=lambda q: 'An answer.')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langchain', 'llama_index'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"


def blocks(markdown: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", markdown, flags=re.DOTALL)


@pytest.mark.parametrize(
    ("page", "module", "metrics"),
    [
        ("langchain.md", "my_chain.py", ["faithfulness", "citation_accuracy"]),
        ("llamaindex.md", "my_engine.py", ["faithfulness"]),
    ],
)
def test_the_docs_example_runs_from_the_cli_and_python(
    tmp_path: Path, page: str, module: str, metrics: list[str]
) -> None:
    """The page's module, dataset and `vera eval` command, run as a user would (a
    subprocess in the folder that holds them, `--pipeline module:object`); its Python prints
    the same scores, and the page shows them (to three places)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    source, usage = blocks(text, "python")
    (tmp_path / module).write_text(source, encoding="utf-8")
    (tmp_path / "questions.jsonl").write_text(blocks(text, "json")[0], encoding="utf-8")
    command = next(
        line for block in blocks(text, "bash") for line in block.splitlines() if "vera eval" in line
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "200"}
    args = [sys.executable, "-m", "vera", *shlex.split(command)[1:], "--output", "report.json"]
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    result = SampleResult.model_validate(report["samples"][0])
    assert list(result.scores) == metrics
    assert_quote_is_faithful(result)  # the fake model's answer quotes a document
    if "citation_accuracy" in metrics:
        assert result.scores["citation_accuracy"] == 1.0  # it cites the document it quotes
    assert {c["id"] for c in report["samples"][0]["contexts"]} == {
        "policy-refunds",
        "policy-shipping",
    }
    python = subprocess.run(
        [sys.executable, "-c", usage],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert python.returncode == 0, python.stderr
    printed = [float(x) for x in python.stdout.splitlines()[0].split()]
    assert printed == pytest.approx(list(result.scores.values()))
    documented = re.search(r"^print\(report\.metrics.*#(.*)$", usage, flags=re.MULTILINE)
    assert documented is not None, usage
    assert [float(x) for x in documented[1].split()] == pytest.approx(printed, abs=5e-4)
