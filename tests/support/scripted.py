"""A scripted model for the loopback server, in the dialect of every VERA prompt.

It is a fake, explicit in what it does: extraction splits the answer at full stops; a claim is
CONTRADICTED when it holds "60", else FULLY_SUPPORTED, each citing context 1's first sentence
(by its id "1.1" where the prompt numbers sentences, else by quoting it, so the quote is
found); relevance is always RELEVANT; truths restate each context; a generator answers with
the first sentence of passage [1] (plus `invented` when set), and a revision keeps only
that first sentence.

It reads each prompt's data between the tags the prompts fence it with (`<answer>`,
`<contexts>`, `<claims>`, ...), as a model would.

    loopback.default = scripted_openai
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.loopback import Recorded, Reply, ok_anthropic_tool, ok_openai

__all__ = ["GeneratorScript", "scripted_anthropic", "scripted_openai", "scripted_reply", "section"]


def section(prompt: str, tag: str) -> str:
    """The data between `<tag>` and `</tag>` on their own lines (the data cannot hold either:
    the prompts neutralise them)."""
    return prompt.rsplit(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0]


def _first_sentence(numbered: str) -> str:
    """The first sentence of text [1] in a numbered section."""
    first = numbered.split("[1] ", 1)[1].split("\n\n[2] ", 1)[0] if "[1] " in numbered else ""
    return re.split(r"(?<=[.!?])\s", first.strip())[0] if first.strip() else ""


def _verdict(text: str, quote: str) -> dict[str, Any]:
    verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
    return {"verdict": verdict, "context": 1, "quote": quote, "reason": "scripted"}


def _cited(text: str, contexts: str) -> dict[str, Any]:
    """A verdict on `text`: by sentence id ("1.1", or 1 where the sentences are numbered
    across the contexts: the compact prompts) where the contexts' sentences are numbered,
    else with context 1's first sentence copied as the quote."""
    verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
    if re.search(r"^1\.1 ", contexts, flags=re.M):
        return {"verdict": verdict, "sentence": "1.1", "reason": "scripted"}
    if re.match(r"1 ", contexts):
        return {"verdict": verdict, "sentence": 1, "reason": "scripted"}
    return _verdict(text, _first_sentence(contexts))


def _answer(prompt: str) -> str:
    """The answer as one text; the compact prompts number its sentences ("1 ...", a line each)."""
    answer = section(prompt, "answer")
    numbered = re.findall(r"^\d+ (.*)$", answer, flags=re.M)
    return " ".join(numbered) if numbered else answer


def scripted_reply(prompt: str) -> dict[str, Any]:
    """The JSON reply to one of the judge's prompts."""
    if "<texts>" in prompt:
        texts = re.findall(r"^\[(\d+)\] ", section(prompt, "texts"), flags=re.M)
        return {"ratings": [{"text": int(n), "relevance": "RELEVANT"} for n in texts]}
    if "List the factual statements" in prompt:
        contexts = re.findall(r"^\[(\d+)\] (.*)$", section(prompt, "contexts"), flags=re.M)
        return {"truths": [{"context": int(n), "text": text} for n, text in contexts]}
    if "<turns>" in prompt:  # single-call mode, the turns of one conversation together
        return {"turns": _turn_claims(section(prompt, "turns"))}
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
    contexts = section(prompt, "contexts")
    if "Turn 1: judge these claims against" in prompt:
        return {"verdicts": _turn_verdicts(section(prompt, "claims"))}
    claims = re.findall(r"^(\d+)\. (.*)$", section(prompt, "claims"), flags=re.M)
    return {"verdicts": [{"claim": int(n), **_cited(text, contexts)} for n, text in claims]}


def _turn_verdicts(claims: str) -> list[dict[str, Any]]:
    """Verdicts for the turns of one conversation together (verify_turns): each claim cites
    the first sentence of its own turn's first context, named in the line above its turn."""
    verdicts: list[dict[str, Any]] = []
    first = 1
    for line in claims.splitlines():
        header = re.match(r"^Turn \d+: judge these claims against contexts (\d+) to", line)
        if header:
            first = int(header.group(1))
        claim = re.match(r"^(\d+)\. (.*)$", line)
        if claim:
            verdict = "CONTRADICTED" if "60" in claim.group(2) else "FULLY_SUPPORTED"
            verdicts.append(
                {"claim": int(claim.group(1)), "verdict": verdict, "sentence": f"{first}.1"}
            )
    return verdicts


def _sentences(answer: str) -> list[str]:
    return [s.strip() + "." for s in answer.split(".") if s.strip()]


def _turn_claims(turns: str) -> list[dict[str, Any]]:
    """Claims and verdicts for each `<turn N>` block (single_call_turns): the answer split at
    full stops, each claim citing the first sentence of the first context its turn names."""
    found: list[dict[str, Any]] = []
    for number, allowed, answer in re.findall(
        r"^<turn (\d+)>\nContexts: ([^\n]*)\n.*?^<answer>\n(.*?)\n</answer>$",
        turns,
        flags=re.M | re.S,
    ):
        first = allowed.split(",")[0].strip()
        claims = []
        for text in _sentences(answer):
            verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
            cited = {"sentence": f"{first}.1"} if first != "none" else {"verdict": "NO_EVIDENCE"}
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
