"""A scripted model for the loopback server, in the dialect of every VERA prompt.

It is a fake, explicit in what it does: extraction splits the answer at full stops; a claim is
CONTRADICTED when it holds "60", else FULLY_SUPPORTED; relevance is always RELEVANT; truths
restate each context; a generator answers with the first sentence of passage [1] (plus
`invented` when set), and a revision keeps only that first sentence.

    loopback.default = scripted_openai
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support.loopback import Recorded, Reply, ok_anthropic_tool, ok_openai

__all__ = ["GeneratorScript", "scripted_anthropic", "scripted_openai", "scripted_reply"]


def _verdict(text: str) -> dict[str, Any]:
    verdict = "CONTRADICTED" if "60" in text else "FULLY_SUPPORTED"
    return {"verdict": verdict, "context": 1, "quote": "", "reason": "scripted"}


def scripted_reply(prompt: str) -> dict[str, Any]:
    """The JSON reply to one of the judge's prompts."""
    if "how relevant it is to the QUESTION" in prompt:
        texts = re.findall(r"^\[(\d+)\] ", prompt.rsplit("TEXTS:\n", 1)[1], flags=re.M)
        return {"ratings": [{"text": int(n), "relevance": "RELEVANT"} for n in texts]}
    if "List the factual statements" in prompt:
        contexts = re.findall(r"^\[(\d+)\] (.*)$", prompt, flags=re.M)
        return {"truths": [{"context": int(n), "text": text} for n, text in contexts]}
    if "Split the ANSWER" in prompt:
        answer = prompt.rsplit("ANSWER:\n", 1)[1]
        sentences = [s.strip() + "." for s in answer.split(".") if s.strip()]
        claims = [{"number": i, "text": s} for i, s in enumerate(sentences, 1)]
        if "then give each claim one verdict" in prompt:  # single-call mode
            claims = [{**claim, **_verdict(claim["text"])} for claim in claims]
        return {"claims": claims}
    claims = re.findall(r"^(\d+)\. (.*)$", prompt.rsplit("CLAIMS:\n", 1)[1], flags=re.M)
    return {"verdicts": [{"claim": int(n), **_verdict(text)} for n, text in claims]}


class GeneratorScript:
    """Answers the generator's and reviser's prompts; everything else as the judge."""

    def __init__(self, *, invented: str | None = None) -> None:
        self.invented = invented

    def __call__(self, request: Recorded) -> Reply:
        prompt = request.json["messages"][-1]["content"]
        if "Answer the QUESTION using only the numbered PASSAGES" in prompt or (
            "UNSUPPORTED:" in prompt
        ):
            passage = prompt.split("[1] ", 1)[1].split("\n\n", 1)[0] if "[1] " in prompt else ""
            first = re.split(r"(?<=[.!?])\s", passage.strip())[0] if passage.strip() else "None."
            extra = f" {self.invented}" if self.invented and "UNSUPPORTED:" not in prompt else ""
            return ok_openai(f"{first} [1]{extra}")
        return scripted_openai(request)


def scripted_openai(request: Recorded) -> Reply:
    prompt = request.json["messages"][-1]["content"]
    return ok_openai(json.dumps(scripted_reply(prompt)), prompt_tokens=1000, completion_tokens=100)


def scripted_anthropic(request: Recorded) -> Reply:
    prompt = request.json["messages"][-1]["content"]
    return ok_anthropic_tool(scripted_reply(prompt), name=request.json["tools"][0]["name"])
