"""Generation steps: an LLM that answers from the retrieved passages and cites them, and the
offline extractive generator (which writes nothing new: it selects sentences)."""

from __future__ import annotations

from pathlib import Path

from vera.judges.prompts import load_prompt
from vera.pipelines.core import RagState
from vera.providers.base import ChatModel, ChatRequest
from vera.providers.managed import ManagedChatModel

__all__ = ["LLMGenerate"]


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
        passages = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(state.contexts, 1))
        request = ChatRequest(
            messages=self.prompt.render(contexts=passages or "(none)", query=state.query),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            prompt_version=self.prompt.version,
        )
        if isinstance(self.model, ManagedChatModel):
            reply = await self.model.complete(request, label="generate_answer")
        else:
            reply = await self.model.complete(request)
        return state.evolve(response=reply.text.strip())
