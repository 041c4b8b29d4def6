"""A scripted model for the loopback server, in the dialect of every VERA prompt.

It is a fake, explicit in what it does: extraction splits the answer at full stops; a claim is
CONTRADICTED when it holds "60", else FULLY_SUPPORTED, each citing the numbered sentence that
shares the most words with it (context 1's first in a tie; by its id where the prompt numbers
sentences, else by quoting it, so the quote is found); relevance is always RELEVANT; truths
restate each context; a generator answers with
the first sentence of passage [1] (plus `invented` when set), and a revision keeps only
that first sentence. A rubric's criteria become one item per sentence; an item that names a
word in single quotes ('must') is NOT_MET by an answer (or claim) holding that word, quoting
its sentence, an item holding "(n/a)" is NOT_APPLICABLE, and every other item is MET; a
verification with rubric items riding on it is answered with both, the rubric's under
"rubric" (an item on the whole answer as claim 0).

It reads each prompt's data between the tags the prompts fence it with (`<answer>`,
`<contexts>`, `<claims>`, ...), as a model would.

    loopback.default = scripted_openai
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.loopback import Recorded, Reply, ok_anthropic_tool, ok_openai

__all__ = [
    "GeneratorScript",
    "SmallModel",
    "scripted_anthropic",
    "scripted_openai",
    "scripted_reply",
    "section",
]


def section(prompt: str, tag: str) -> str:
    """The data between `<tag>` and `</tag>` on their own lines (the data cannot hold either:
    the prompts neutralise them)."""
    return prompt.rsplit(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0]


def _first_sentence(numbered: str) -> str:
    """The first sentence of text [1] in a numbered section."""
    first = numbered.split("[1] ", 1)[1].split("\n\n[2] ", 1)[0] if "[1] " in numbered else ""
    return re.split(r"(?<=[.!?])\s", first.strip())[0] if first.strip() else ""


def _verdict(text: str, quote: str, context: int = 1) -> dict[str, Any]:
    verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
    return {"verdict": verdict, "context": context, "quote": quote, "reason": "scripted"}


def _quoted(text: str, contexts: str) -> dict[str, Any]:
    """A verdict quoting the sentence of the numbered contexts ("[k] ...") that shares the
    most words with `text`; context 1's first sentence in a tie or for none."""
    blocks = re.findall(r"^\[(\d+)\] (.*?)(?=\n\n\[\d+\] |\Z)", contexts, flags=re.M | re.S)
    shown = [
        (int(k), sentence)
        for k, block in blocks
        for sentence in re.split(r"(?<=[.!?])\s", block.strip())
        if sentence
    ]
    if not shown:
        return _verdict(text, _first_sentence(contexts))
    best = max(shown, key=lambda row: len(_words(row[1]) & _words(text)))
    if not _words(best[1]) & _words(text):
        best = shown[0]
    return _verdict(text, best[1], best[0])


def _cited(text: str, contexts: str) -> dict[str, Any]:
    """A verdict on `text`: by sentence id ("1.1", or 1 where the sentences are numbered
    across the contexts: the compact prompts) where the contexts' sentences are numbered,
    else with context 1's first sentence copied as the quote."""
    verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
    if re.search(r"^1\.1 ", contexts, flags=re.M) or re.match(r"1 ", contexts):
        return {"verdict": verdict, "sentence": _closest(text, contexts), "reason": "scripted"}
    return _quoted(text, contexts)


def _words(text: str) -> set[str]:
    return {word[:5] for word in re.findall(r"\w+", text.lower()) if len(word) > 3}


def _closest(claim: str, contexts: str, allowed: set[int] | None = None) -> str | int:
    """The id of the numbered sentence sharing the most words with `claim`; the first one
    (1.1, or 1 where the sentences are numbered across the contexts) in a tie or for none.
    `allowed`: only the sentences of these contexts ("k.n" ids)."""
    shown = re.findall(r"^(\d+(?:\.\d+)?) (.*)$", contexts, flags=re.M)
    if allowed is not None:
        shown = [row for row in shown if int(row[0].split(".")[0]) in allowed]
    best = max(shown, key=lambda row: len(_words(row[1]) & _words(claim)))
    if not _words(best[1]) & _words(claim):
        best = shown[0]
    return best[0] if "." in best[0] else int(best[0])


def _answer(prompt: str) -> str:
    """The answer as one text; the compact prompts number its sentences ("1 ...", a line each)."""
    answer = section(prompt, "answer")
    numbered = re.findall(r"^\d+ (.*)$", answer, flags=re.M)
    return " ".join(numbered) if numbered else answer


def _rubric_items(criteria: str) -> list[dict[str, Any]]:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", criteria) if s.strip()]
    return [{"text": s, "reference": "expected answer" in s} for s in sentences]


def _rubric_verdict(item: str, text: str) -> dict[str, Any]:
    """The verdict on one item for `text` (the whole answer, or one claim)."""
    if "(n/a)" in item:
        return {"verdict": "NOT_APPLICABLE", "quote": "", "reason": "scripted"}
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s] or [text]
    for word in re.findall(r"'(\w+)'", item):
        hits = [s for s in sentences if word.lower() in s.lower()]
        if hits:
            return {"verdict": "NOT_MET", "quote": hits[0], "reason": f"says {word}"}
    return {"verdict": "MET", "quote": sentences[0], "reason": "scripted"}


def _rubric_verdicts(prompt: str) -> list[dict[str, Any]]:
    items = re.findall(r"^(\d+)\. (.*)$", section(prompt, "items"), flags=re.M)
    if "<claims>" not in prompt:
        answer = section(prompt, "answer")
        return [{"item": int(n), **_rubric_verdict(item, answer)} for n, item in items]
    claims = re.findall(r"^(\d+)\. (.*)$", section(prompt, "claims"), flags=re.M)
    return [
        {"claim": int(c), "item": int(n), **_rubric_verdict(item, claim)}
        for c, claim in claims
        for n, item in items
    ]


def _riding_verdicts(prompt: str) -> list[dict[str, Any]]:
    """The rubric part of a verification with items riding on it: the items marked "(each
    claim)" judged claim by claim, then those marked "(whole answer)" on the answer, as claim
    0 (the order of the replies to rubric_claims and rubric_answer)."""
    items = re.findall(
        r"^(\d+)\. \((each claim|whole answer)\) (.*)$", section(prompt, "items"), flags=re.M
    )
    claims = re.findall(r"^(\d+)\. (.*)$", section(prompt, "claims"), flags=re.M)
    answer = section(prompt, "answer")
    per_claim = [
        {"claim": int(c), "item": int(n), **_rubric_verdict(item, text)}
        for c, text in claims
        for n, scope, item in items
        if scope == "each claim"
    ]
    whole = [
        {"claim": 0, "item": int(n), **_rubric_verdict(item, answer)}
        for n, scope, item in items
        if scope == "whole answer"
    ]
    return per_claim + whole


def scripted_reply(prompt: str) -> dict[str, Any]:
    """The JSON reply to one of the judge's prompts."""
    if "<criteria>" in prompt:
        return {"items": _rubric_items(section(prompt, "criteria"))}
    if "<items>" in prompt and 'under "rubric"' in prompt:
        # A verification with a rubric's items riding on it (rubric_rider): both parts.
        return {**_verification(prompt), "rubric": _riding_verdicts(prompt)}
    if "<items>" in prompt:
        return {"verdicts": _rubric_verdicts(prompt)}
    if "<texts>" in prompt:
        texts = re.findall(r"^\[(\d+)\] ", section(prompt, "texts"), flags=re.M)
        return {"ratings": [{"text": int(n), "relevance": "RELEVANT"} for n in texts]}
    if "List the factual statements" in prompt:
        contexts = re.findall(r"^\[(\d+)\] (.*)$", section(prompt, "contexts"), flags=re.M)
        return {"truths": [{"context": int(n), "text": text} for n, text in contexts]}
    if "<turns>" in prompt:  # single-call mode, the turns of one conversation together
        return {"turns": _turn_claims(section(prompt, "turns"), section(prompt, "contexts"))}
    if "<answer>" in prompt:
        answer = _answer(prompt)
        sentences = [s.strip() + "." for s in answer.split(".") if s.strip()]
        claims: list[dict[str, Any]] = [
            {"number": i, "text": s} for i, s in enumerate(sentences, 1)
        ]
        if "<contexts>" in prompt:  # single-call mode
            contexts = section(prompt, "contexts")
            claims = [{**claim, **_cited(str(claim["text"]), contexts)} for claim in claims]
        return {"claims": claims}
    return _verification(prompt)


def _verification(prompt: str) -> dict[str, Any]:
    contexts = section(prompt, "contexts")
    if "Turn 1: judge these claims against" in prompt:
        return {"verdicts": _turn_verdicts(section(prompt, "claims"), contexts)}
    claims = re.findall(r"^(\d+)\. (.*)$", section(prompt, "claims"), flags=re.M)
    return {"verdicts": [{"claim": int(n), **_cited(text, contexts)} for n, text in claims]}


def _turn_verdicts(claims: str, contexts: str) -> list[dict[str, Any]]:
    """Verdicts for the turns of one conversation together (verify_turns): each claim cites
    the closest sentence of its own turn's contexts, named in the line above its turn."""
    verdicts: list[dict[str, Any]] = []
    allowed = {1}
    for line in claims.splitlines():
        header = re.match(r"^Turn \d+: judge these claims against contexts (\d+) to (\d+)", line)
        if header:
            allowed = set(range(int(header.group(1)), int(header.group(2)) + 1))
        claim = re.match(r"^(\d+)\. (.*)$", line)
        if claim:
            verdict = "CONTRADICTED" if "60" in claim.group(2) else "FULLY_SUPPORTED"
            cited = _closest(claim.group(2), contexts, allowed)
            verdicts.append({"claim": int(claim.group(1)), "verdict": verdict, "sentence": cited})
    return verdicts


def _sentences(answer: str) -> list[str]:
    return [s.strip() + "." for s in answer.split(".") if s.strip()]


def _turn_claims(turns: str, contexts: str) -> list[dict[str, Any]]:
    """Claims and verdicts for each `<turn N>` block (single_call_turns): the answer split at
    full stops, each claim citing the closest sentence of the contexts its turn names."""
    found: list[dict[str, Any]] = []
    for number, allowed, answer in re.findall(
        r"^<turn (\d+)>\nContexts: ([^\n]*)\n.*?^<answer>\n(.*?)\n</answer>$",
        turns,
        flags=re.M | re.S,
    ):
        first = allowed.split(",")[0].strip()
        own = {int(k) for k in re.findall(r"\d+", allowed)}
        claims = []
        for text in _sentences(answer):
            verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
            cited = (
                {"sentence": _closest(text, contexts, own)}
                if first != "none"
                else {"verdict": "NO_EVIDENCE"}
            )
            claims.append({"text": text, "verdict": verdict, **cited})
        found.append({"turn": int(number), "claims": claims})
    return found


class GeneratorScript:
    """Answers the generator's and reviser's prompts; everything else as the judge."""

    def __init__(self, *, invented: str | None = None) -> None:
        self.invented = invented

    def __call__(self, request: Recorded) -> Reply:
        prompt = request.json["messages"][-1]["content"]
        if "<passages>" in prompt:
            first = _first_sentence(section(prompt, "passages")) or "None."
            revising = "<unsupported>" in prompt
            extra = f" {self.invented}" if self.invented and not revising else ""
            return ok_openai(f"{first} [1]{extra}")
        return scripted_openai(request)


def scripted_openai(request: Recorded) -> Reply:
    prompt = request.json["messages"][-1]["content"]
    return ok_openai(json.dumps(scripted_reply(prompt)), prompt_tokens=1000, completion_tokens=100)


def scripted_anthropic(request: Recorded) -> Reply:
    content = request.json["messages"][-1]["content"]
    # A message with a cache breakpoint comes as text blocks; the model reads them as one.
    prompt = content if isinstance(content, str) else "".join(b["text"] for b in content)
    return ok_anthropic_tool(scripted_reply(prompt), name=request.json["tools"][0]["name"])


class SmallModel:
    """A fake that answers VERA's prompts the way Qwen2.5-Coder-1.5B did on a CPU server
    (issue 45), in every reply: JSON in a code fence after a pleasantry and before trailing
    prose; an extraction that starts with "Sure!", numbers its claims "1. ..." and returns an
    answer of `whole_from` sentences or more as one claim; verification rows as a bare list
    (a list where the object was asked for) whose first row is the copied example [1, "F", 7],
    whatever sentence 7 is or whether it exists, and whose other rows cite the closest
    sentence by its text instead of its number; a single-call reply whose first row is a
    preamble. Pair it with `refusing_json_schema` for llama-cpp-python's server.
    `verdict_words`: verification rows as the model wrote them for verify_claims/6, which asks
    [claim, sentence, verdict word, reason only for partly and false]: the sentence by its
    number, a reason on every row, and on claim 1 a JSON boolean where the reason goes.
    `copies_claims`: as it wrote them for verify_claims/7, which asks for the deciding
    sentence by its number or its words: the claim's own words where the sentence goes (a
    close copy of the sentence, not the sentence), "true" for yes, and the reason before the
    verdict.
    `reasons`: as it wrote them for the reasoned verify_claims (named fields, the claim
    restated, a reason, then the verdict): the claim number as a string, no citation of its
    own; the reason quotes the closest sentence ("The context states that ...") for odd
    claims and names its id ("This is stated in paragraph 1.2 of the context.") for even
    ones, and the third claim's entry has no verdict at all.

        loopback.default = refusing_json_schema(SmallModel())
    """

    def __init__(
        self,
        *,
        whole_from: int = 4,
        verdict_words: bool = False,
        copies_claims: bool = False,
        reasons: bool = False,
    ) -> None:
        self.whole_from = whole_from
        self.verdict_words = verdict_words
        self.copies_claims = copies_claims
        self.reasons = reasons

    def __call__(self, request: Recorded) -> Reply:
        messages = request.json["messages"]
        prompt = next(m["content"] for m in reversed(messages) if "</" in m["content"])
        payload = self.reply(prompt)
        text = f"Sure! Here is the JSON:\n```json\n{json.dumps(payload)}\n```\nI hope this helps!"
        return ok_openai(text, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4)

    def reply(self, prompt: str) -> Any:
        if "<texts>" in prompt or "<turns>" in prompt:
            return scripted_reply(prompt)
        if "<answer>" in prompt and "<contexts>" not in prompt:
            sentences = re.findall(r"^\d+ (.*)$", section(prompt, "answer"), flags=re.M)
            if len(sentences) >= self.whole_from:
                return {"claims": [" ".join(sentences)]}
            return {"claims": ["Sure!", *(f"{n}. {s}" for n, s in enumerate(sentences, 1))]}
        contexts = section(prompt, "contexts")
        if "<answer>" in prompt:
            sentences = re.findall(r"^\d+ (.*)$", section(prompt, "answer"), flags=re.M)
            rows: list[list[Any]] = [["Sure! Here is my analysis:", "N", None], [1, "F", 7]]
            rows += [[text, *self._row(text, contexts)] for text in sentences[1:]]
            return {"claims": rows}
        claims = re.findall(r"^(\d+)\. (.*)$", section(prompt, "claims"), flags=re.M)
        if self.reasons:
            return {"verdicts": [self._reasoned(int(n), t, contexts) for n, t in claims]}
        if self.copies_claims:
            return {"v": [self._copied_row(int(n), t) for n, t in claims]}
        if self.verdict_words:
            return {"v": [self._word_row(int(n), t, contexts) for n, t in claims]}
        return [[1, "F", 7], *([int(n), *self._row(t, contexts)] for n, t in claims[1:])]

    def _reasoned(self, number: int, claim: str, contexts: str) -> dict[str, Any]:
        cited = str(_closest(claim, contexts))
        text = re.findall(rf"^{re.escape(cited)} (.*)$", contexts, flags=re.M)[0]
        reason = (
            f"The context states that {text}"
            if number % 2
            else f"This is stated in paragraph {cited} of the context."
        )
        entry = {"claim": str(number), "statement": claim, "reason": reason}
        if number == 3:
            return entry
        return {**entry, "verdict": "CONTRADICTED" if "60" in claim else "SUPPORTED"}

    def _word_row(self, number: int, claim: str, contexts: str) -> list[Any]:
        cited = _closest(claim, contexts)
        word = "false" if "60" in claim else "yes"
        reason = word == "yes" if number == 1 else f"The context states this in sentence {cited}."
        return [number, cited, word, reason]

    def _copied_row(self, number: int, claim: str) -> list[Any]:
        if "60" in claim:
            return [number, claim, "the sentence says 30 days", "false"]
        return [number, claim, None, "true"]

    def _row(self, claim: str, contexts: str) -> list[Any]:
        """A verdict letter and the closest sentence, cited by its text."""
        cited = str(_closest(claim, contexts))
        text = dict(re.findall(r"^(\d+(?:\.\d+)?) (.*)$", contexts, flags=re.M))[cited]
        return ["C" if "60" in claim else "F", text]
