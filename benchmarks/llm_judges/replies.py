"""What the simulated judge model answers: prompt detection and one reply builder per prompt.

Every framework's prompts are recognised by marker phrases copied from its installed
templates (VERA's prompts/*.toml, ragas.metrics.collections.faithfulness.util and the legacy
ragas.metrics._faithfulness, deepeval/metrics/faithfulness/templates/*.txt). A reply is
derived from the prompt, so its length is realistic: claims are the answer's sentences,
truths are the contexts' sentences, and each verdict comes from the same word-overlap rule
for everyone (`judge`). To support a new prompt, add a `PromptKind` to `KINDS`; a prompt no
kind matches gets a minimal reply that fits its JSON schema and is counted as "unknown".
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Reply = dict[str, Any]

_STOP = frozenset(
    str.split(
        "a an the of for to in on at by with and or is are was were be been it its this that "
        "which who as from up each every after under about within no any has have had"
    )
)
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+", text))


@dataclass(frozen=True)
class Judgement:
    """The simulated model's view of one claim: supported, partial, contradicted or none."""

    label: str
    context: int | None  # index into the list of passages judged against
    quote: str


def judge(claim: str, passages: list[str]) -> Judgement:
    """Best-matching sentence by word coverage; a changed number there is a contradiction."""
    words = _content_words(claim)
    best = (0.0, -1, "")
    for index, passage in enumerate(passages):
        for sentence in sentences(passage):
            coverage = len(words & _content_words(sentence)) / max(1, len(words))
            if coverage > best[0]:
                best = (coverage, index, sentence)
    coverage, index, quote = best
    if coverage >= 0.75:
        same_numbers = _numbers(claim) <= _numbers(quote)
        return Judgement("supported" if same_numbers else "contradicted", index, quote)
    if coverage >= 0.5:
        return Judgement("partial", index, quote)
    return Judgement("none", None, "")


def _between(text: str, start: str, end: str | None = None) -> str:
    """The text after the last `start`, up to the next `end` (or the end of the text)."""
    tail = text[text.rfind(start) + len(start) :] if start in text else text
    if end is not None and end in tail:
        tail = tail[: tail.index(end)]
    return tail.strip()


# VERA ------------------------------------------------------------------------------------

_VERA_VERDICTS = {
    "supported": "FULLY_SUPPORTED",
    "partial": "PARTIALLY_SUPPORTED",
    "contradicted": "CONTRADICTED",
    "none": "NO_EVIDENCE",
}


def _tagged(prompt: str, tag: str) -> str:
    """The text VERA put between <tag> and </tag> (the last such block: the data)."""
    return _between(prompt, f"<{tag}>\n", f"\n</{tag}>")


def _answer_sentences(prompt: str) -> list[str]:
    """The answer's sentences: VERA numbers them ("1 ...", one a line); else split here."""
    answer = _tagged(prompt, "answer")
    numbered = re.findall(r"(?m)^\d+ (.+)$", answer)
    return [s.strip() for s in numbered] if numbered else sentences(answer)


def vera_extract(prompt: str) -> Reply:
    # Claims are the answer's sentences (the rule for every framework); each is one claim as
    # it stands, so a model following VERA's prompt cites its number (claims by reference).
    return {"claims": list(range(1, len(_answer_sentences(prompt)) + 1))}


def _numbered(block: str) -> list[str]:
    """Texts from VERA's "[1] ...\n\n[2] ..." blocks."""
    return [p.strip() for p in re.split(r"(?m)^\[\d+\] ", block) if p.strip()]


def _sentence_ids(block: str) -> tuple[list[str], dict[str, Any]]:
    """VERA's contexts with numbered sentences: "[1]\n1.1 ...\n1.2 ..." blocks, or flat
    ("1 ...\n2 ...", contexts a blank line apart). The passages, and each sentence's id by
    its text: "2.3", or the flat number as an integer (what the compact prompt shows)."""
    ids: dict[str, Any] = {}
    passages: dict[int, list[str]] = {}
    for k, n, text in re.findall(r"(?m)^(\d+)\.(\d+) (.+)$", block):
        ids.setdefault(text.strip(), f"{k}.{n}")
        passages.setdefault(int(k), []).append(text.strip())
    if not ids:
        for k, chunk in enumerate(re.split(r"\n\s*\n", block.strip()), start=1):
            for n, text in re.findall(r"(?m)^(\d+) (.+)$", chunk):
                ids.setdefault(text.strip(), int(n))
                passages.setdefault(k, []).append(text.strip())
    return [" ".join(passages[k]) for k in sorted(passages)], ids


def _vera_verdict(text: str, passages: list[str], ids: dict[str, Any]) -> dict[str, Any]:
    """A lean verdict: the id of the deciding sentence, a reason only where it adds."""
    j = judge(text, passages)
    verdict: dict[str, Any] = {
        "verdict": _VERA_VERDICTS[j.label],
        "sentence": ids.get(j.quote) if j.context is not None else None,
    }
    if j.label == "contradicted":
        verdict["reason"] = "a different figure"
    elif j.label == "partial":
        verdict["reason"] = "only part of it"
    return verdict


def _vera_row(first: int | str, text: str, passages: list[str], ids: dict[str, Any]) -> list[Any]:
    """A compact single-call row: [claim, code, sentence id, reason only for P and C]."""
    verdict = _vera_verdict(text, passages, ids)
    row = [first, verdict["verdict"][0], verdict["sentence"]]
    return [*row, verdict["reason"]] if "reason" in verdict else row


_VERA_WORDS = {"F": "yes", "P": "partly", "N": "no", "C": "false"}


def vera_verify(prompt: str) -> Reply:
    """verify_claims rows: [claim, sentence id, verdict word, reason only for partly/false]."""
    passages, ids = _sentence_ids(_tagged(prompt, "contexts"))
    claims = re.findall(r"(?m)^(\d+)\. (.+)$", _tagged(prompt, "claims"))
    rows = []
    for n, text in claims:
        verdict = _vera_verdict(text, passages, ids)
        row = [int(n), verdict["sentence"], _VERA_WORDS[verdict["verdict"][0]]]
        rows.append([*row, verdict["reason"]] if "reason" in verdict else row)
    return {"v": rows}


def vera_verify_quoted(prompt: str) -> Reply:
    """verify_claims_quoted, VERA's prompt for long contexts: the evidence copied as a quote."""
    passages = _numbered(_tagged(prompt, "contexts"))
    claims = re.findall(r"(?m)^(\d+)\. (.+)$", _tagged(prompt, "claims"))
    verdicts = []
    for n, text in claims:
        j = judge(text, passages)
        cited = j.context + 1 if j.context is not None else None
        reason = {"supported": "Context states this.", "none": "No context addresses this."}
        verdicts.append(
            {
                "claim": int(n),
                "verdict": _VERA_VERDICTS[j.label],
                "context": cited,
                "quote": j.quote,
                "reason": reason.get(j.label, f"Context {cited} differs."),
            }
        )
    return {"verdicts": verdicts}


def vera_truths(prompt: str) -> Reply:
    passages = _numbered(_tagged(prompt, "contexts"))
    return {
        "truths": [
            {"context": i, "text": s} for i, p in enumerate(passages, 1) for s in sentences(p)
        ]
    }


def vera_single_call(prompt: str) -> Reply:
    # Claims are the answer's sentences, each cited by its number (claims by reference).
    passages, ids = _sentence_ids(_tagged(prompt, "contexts"))
    claims = enumerate(_answer_sentences(prompt), start=1)
    return {"claims": [_vera_row(n, s, passages, ids) for n, s in claims]}


def vera_relevance(prompt: str) -> Reply:
    question = _content_words(_tagged(prompt, "question"))
    ratings = []
    for i, text in enumerate(_numbered(_tagged(prompt, "texts")), 1):
        share = len(question & _content_words(text)) / max(1, len(question))
        relevance = (
            "RELEVANT" if share >= 0.5 else "PARTIALLY_RELEVANT" if share > 0 else "IRRELEVANT"
        )
        ratings.append({"text": i, "relevance": relevance, "reason": f"{share:.0%} overlap."})
    return {"ratings": ratings}


# RAGAS (the collections metric and the legacy one share these prompts) ---------------------


def _ragas_input(prompt: str) -> dict[str, Any]:
    data = json.loads(_between(prompt, "input: ", "\nOutput:"))
    return data if isinstance(data, dict) else {}


def ragas_statements(prompt: str) -> Reply:
    return {"statements": sentences(str(_ragas_input(prompt).get("answer", "")))}


def ragas_nli(prompt: str) -> Reply:
    data = _ragas_input(prompt)
    passages = [str(data.get("context", ""))]
    out = []
    for statement in data.get("statements", []):
        j = judge(str(statement), passages)
        ok = j.label == "supported"
        reason = f"The context states: {j.quote}" if ok else "The context does not state this."
        out.append({"statement": statement, "reason": reason, "verdict": int(ok)})
    return {"statements": out}


# DeepEval -------------------------------------------------------------------------------


def deepeval_truths(prompt: str) -> Reply:
    return {"truths": sentences(_between(prompt, "\nText:\n", "\n\nJSON:"))}


def deepeval_claims(prompt: str) -> Reply:
    return {"claims": sentences(_between(prompt, "AI Output:\n", "\n\nJSON:"))}


def _literal_list(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            value = json.loads(text)
        except ValueError:
            return [line for line in text.splitlines() if line.strip()]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def deepeval_verdicts(prompt: str) -> Reply:
    passages = [_between(prompt, "Retrieval Contexts:\n", "\n\nClaims:\n")]
    claims = _literal_list(_between(prompt, "\n\nClaims:\n", "\n\nJSON:"))
    verdicts: list[dict[str, str]] = []
    for claim in claims:
        j = judge(claim, passages)
        if j.label == "supported":
            verdicts.append({"verdict": "yes"})
        elif j.label == "contradicted":
            verdicts.append({"verdict": "no", "reason": f"The context says: {j.quote}"})
        else:
            verdicts.append({"verdict": "borderline", "reason": "The context does not say."})
    return {"verdicts": verdicts}


def deepeval_reason(prompt: str) -> Reply:
    score = _between(prompt, "Faithfulness Score:\n", "\n")
    contradictions = _literal_list(_between(prompt, "Contradictions:\n", "\n\nJSON:"))
    if not contradictions:
        return {"reason": f"The score is {score} because the output agrees with the context."}
    first = contradictions[0].rstrip(".")
    n = len(contradictions)
    return {"reason": f"The score is {score} because {n} claim(s) differ: {first}."}


# The table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptKind:
    """A prompt recognised by marker phrases (all must appear), and how to answer it."""

    name: str
    markers: tuple[str, ...]
    build: Callable[[str], Reply]


KINDS: tuple[PromptKind, ...] = (
    # Before vera.extract: the single-call prompt contains the extraction marker too.
    PromptKind(
        "vera.single_call",
        ("claims in order and judge each by the numbered context sentences only",),
        vera_single_call,
    ),
    PromptKind(
        "vera.extract",
        ("List the numbered answer's atomic factual claims in order",),
        vera_extract,
    ),
    PromptKind(
        "vera.verify",
        ("Check each numbered claim against the numbered context sentences only",),
        vera_verify,
    ),
    PromptKind(
        "vera.verify_quoted",
        ("Judge each numbered claim by the numbered contexts only",),
        vera_verify_quoted,
    ),
    PromptKind(
        "vera.truths",
        ("List the factual statements made by each numbered context",),
        vera_truths,
    ),
    PromptKind(
        "vera.relevance",
        ("decide how relevant it is to the question inside the <question> tags",),
        vera_relevance,
    ),
    PromptKind(
        "ragas.statements",
        ("Break down each sentence into one or more fully understandable statements",),
        ragas_statements,
    ),
    PromptKind(
        "ragas.nli",
        ("judge the faithfulness of a series of statements based on a given context",),
        ragas_nli,
    ),
    PromptKind("deepeval.truths", ('"truths" key as a list of strings',), deepeval_truths),
    PromptKind("deepeval.claims", ('"claims" key as a list of strings',), deepeval_claims),
    PromptKind(
        "deepeval.verdicts",
        ("indicate whether EACH claim contradicts any facts in the retrieval context",),
        deepeval_verdicts,
    ),
    PromptKind(
        "deepeval.reason",
        ("CONCISELY summarize the contradictions to justify the score",),
        deepeval_reason,
    ),
)


def detect(texts: list[str]) -> tuple[PromptKind | None, str]:
    """The first kind whose markers all appear in one message, and that message's text."""
    for text in texts:
        for kind in KINDS:
            if all(marker in text for marker in kind.markers):
                return kind, text
    return None, ""


def minimal_instance(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """The smallest value that fits a JSON schema: the reply to a prompt no kind matches."""
    if not isinstance(schema, dict):
        return {}
    if defs is None:
        defs = schema.get("$defs") or schema.get("definitions") or {}
    if "$ref" in schema:
        return minimal_instance(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        names: list[str] = schema.get("required", list(props))
        return {k: minimal_instance(props.get(k, {}), defs) for k in names}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)


def reply_for(texts: list[str], schema: Any) -> tuple[str, Reply]:
    """The prompt kind's name ("unknown" when none matches) and the JSON reply."""
    kind, text = detect(texts)
    if kind is None:
        reply = minimal_instance(schema) if schema else {"result": "ok"}
        return "unknown", reply if isinstance(reply, dict) else {"result": reply}
    return kind.name, kind.build(text)
