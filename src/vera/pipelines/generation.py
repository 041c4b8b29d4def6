"""Generation steps: an LLM that answers from the retrieved passages and cites them, and the
offline extractive generator (which writes nothing new: it selects sentences)."""

from __future__ import annotations

from pathlib import Path

from vera.judges.prompts import load_prompt
from vera.pipelines.core import RagState
from vera.providers.base import ChatModel, ChatRequest, Message
from vera.providers.managed import ManagedChatModel

__all__ = ["LLMGenerate", "LLMRevise"]


class LLMGenerate:
    """A step that asks a chat model to answer the query from the state's contexts, with
    `[n]` citations. The prompt is the versioned `generate_answer` file (overridable)."""

    def __init__(
        self,
        model: ChatModel,
        *,
        prompts_dir: Path | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
    ) -> None:
        self.model = model
        self.prompt = load_prompt("generate_answer", prompts_dir)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.name = f"generate:{model.provider}:{model.model}"

    async def __call__(self, state: RagState) -> RagState:
        messages = self.prompt.render(contexts=_passages(state), query=state.query)
        text = await _ask(self.model, messages, self.prompt.version, self.prompt.name, self)
        return state.evolve(response=text)


class LLMRevise:
    """A step that asks the model to fix or drop the statements a preceding `Verify` step
    (with `action="flag"`) found unsupported; an answer with none passes through."""

    def __init__(
        self,
        model: ChatModel,
        *,
        prompts_dir: Path | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
    ) -> None:
        self.model = model
        self.prompt = load_prompt("revise_answer", prompts_dir)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.name = f"revise:{model.provider}:{model.model}"

    async def __call__(self, state: RagState) -> RagState:
        unsupported = state.data.get("unsupported_claims") or ()
        if state.abstained or not unsupported:
            return state
        messages = self.prompt.render(
            contexts=_passages(state),
            query=state.query,
            answer=state.response or "",
            unsupported="\n".join(f"- {claim}" for claim in unsupported),
        )
        text = await _ask(self.model, messages, self.prompt.version, self.prompt.name, self)
        return state.evolve(response=text)


def _passages(state: RagState) -> str:
    numbered = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(state.contexts, 1))
    return numbered or "(none)"


async def _ask(
    model: ChatModel,
    messages: tuple[Message, ...],
    version: str,
    label: str,
    step: LLMGenerate | LLMRevise,
) -> str:
    request = ChatRequest(
        messages=messages,
        temperature=step.temperature,
        max_tokens=step.max_tokens,
        prompt_version=version,
    )
    if isinstance(model, ManagedChatModel):
        reply = await model.complete(request, label=label)
    else:
        reply = await model.complete(request)
    return reply.text.strip()
