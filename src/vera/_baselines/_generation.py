"""Generation steps: an LLM that answers from the retrieved passages and cites them, and one
that revises an answer the judge could not fully ground. (The offline extractive generator,
which writes nothing new, is `vera._baselines._extractive`.)"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from vera._baselines._extractive import extractive_answer
from vera.judges._calls import tokens
from vera.judges._prompts import load_prompt
from vera.pipelines._core import DryStep, RagState
from vera.providers._base import ChatModel, ChatRequest, Message
from vera.providers._managed import ManagedChatModel


class _PromptedStep:
    """A step that sends one versioned prompt to a chat model and takes its text reply."""

    prompt_name: ClassVar[str]
    verb: ClassVar[str]

    def __init__(
        self,
        model: ChatModel,
        *,
        prompts_dir: Path | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
    ) -> None:
        self.model = model
        self.prompt = load_prompt(self.prompt_name, prompts_dir)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.name = f"{self.verb}:{model.provider}:{model.model}"

    async def _ask(self, messages: tuple[Message, ...]) -> str:
        request = ChatRequest(
            messages=messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            prompt_version=self.prompt.version,
        )
        if isinstance(self.model, ManagedChatModel):
            reply = await self.model.complete(request, label=self.prompt.name)
        else:
            reply = await self.model.complete(request)
        return reply.text.strip()


class LLMGenerate(_PromptedStep):
    """A step that asks a chat model to answer the query from the state's contexts, with
    `[n]` citations. The prompt is the versioned `generate_answer` file (overridable)."""

    prompt_name = "generate_answer"
    verb = "generate"

    async def __call__(self, state: RagState) -> RagState:
        messages = self.prompt.render(contexts=_passages(state), query=state.query)
        return state.evolve(response=await self._ask(messages))

    def dry_run(self, state: RagState) -> DryStep:
        """One call; the offline extractive answer stands in for what the model would write,
        for the size of the work that follows."""
        messages = self.prompt.render(contexts=_passages(state), query=state.query)
        stand_in = extractive_answer(state.query, state.contexts, cite=True).text
        return DryStep(
            state.evolve(response=stand_in),
            calls=1,
            prompt_tokens=sum(tokens(m.content) for m in messages),
            completion_tokens=min(tokens(stand_in), self.max_tokens),
        )


class LLMRevise(_PromptedStep):
    """A step that asks the model to fix or drop the statements a preceding `Verify` step
    (with `action="flag"`) found unsupported; an answer with none passes through."""

    prompt_name = "revise_answer"
    verb = "revise"

    def dry_run(self, state: RagState) -> DryStep:
        """Counted as one call whenever there is an answer: which statements the judge finds
        unsupported is known only once it has run, so this is an upper bound."""
        if state.abstained or not (state.response or "").strip():
            return DryStep(state)
        messages = self.prompt.render(
            contexts=_passages(state),
            query=state.query,
            answer=state.response or "",
            unsupported="",
        )
        prompt = sum(tokens(m.content) for m in messages) + tokens(state.response or "")
        completion = min(tokens(state.response or ""), self.max_tokens)
        return DryStep(state, calls=1, prompt_tokens=prompt, completion_tokens=completion)

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
        return state.evolve(response=await self._ask(messages))


def _passages(state: RagState) -> str:
    numbered = "\n\n".join(f"[{i}] {c.text}" for i, c in enumerate(state.contexts, 1))
    return numbered or "(none)"
