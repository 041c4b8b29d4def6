"""`NLIJudge`: claims checked by a local NLI or factuality model through Hugging Face transformers.

`vera eval --judge nli:PATH_OR_HUB_ID` loads any sequence-classification model that reads a
(premise, hypothesis) pair: an MNLI cross-encoder, or a factuality model in the style of HHEM or
MiniCheck. It is an optional extra (`pip install 'vera-eval[nli]'`), runs on a GPU when one is
there and on the CPU otherwise, and makes no network call once the model is on disk.

Which output means "supported" comes from the model's `config.id2label`:

- a label containing "entail" (but not "not_entailment" / "non-entailment") is entailment, and
  one containing "contradict" is contradiction; probabilities are the softmax over all labels;
- a two-label model without such names (HHEM, MiniCheck) reads label 1 as supported, and has
  no contradiction label;
- a one-logit model reads sigmoid(logit) as the probability of support.

Contexts are usually longer than the model's input, so each context is cut into windows of
whole sentences that fit beside the claim, neighbouring windows sharing one sentence; every
(claim, window) pair is scored and the window with the highest entailment is the claim's
evidence.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vera._text._segment import split_units
from vera._types import DEFAULT_MIN_ENTAILMENT, Claim, ClaimVerdict, Verdict
from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera.judges._base import BaseJudge, JudgeDescription
from vera.judges._offline._claims import extract_claims
from vera.providers._base import MissingExtraError

MAX_LENGTH = 512
"""The most tokens of one (claim, window) pair, whatever longer input the tokenizer claims."""

_NEGATED = re.compile(r"^(?:not|non)[\s_-]*")


@dataclass(frozen=True, slots=True)
class LabelMap:
    """Where a model's support and contradiction probabilities come from.

    `entailment` is an output index; `contradiction` is None for models that have no such
    label. With `sigmoid`, the model has one logit and its sigmoid is the support probability.
    """

    entailment: int
    contradiction: int | None
    sigmoid: bool
    names: tuple[str, ...]


def label_map(id2label: dict[int, str], num_labels: int) -> LabelMap:
    """Read a model's labels as the module docstring says; raise `ConfigError` if they say
    nothing usable (three or more labels, none of them entailment)."""
    names = tuple(str(id2label.get(i, f"LABEL_{i}")) for i in range(num_labels))
    if num_labels == 1:
        return LabelMap(0, None, True, names)
    lowered = [name.lower() for name in names]
    entail = [i for i, n in enumerate(lowered) if "entail" in n and not _NEGATED.match(n)]
    contradict = [i for i, n in enumerate(lowered) if "contradict" in n]
    if entail:
        return LabelMap(entail[0], contradict[0] if contradict else None, False, names)
    if num_labels == 2:
        return LabelMap(1, None, False, names)
    raise ConfigError(
        f"cannot tell which of the model's labels {list(names)} means entailment; "
        "use a model whose id2label names an 'entailment' label"
    )


@dataclass(frozen=True, slots=True)
class Window:
    """Adjacent sentences of one context, as a span of it."""

    context_index: int
    start: int
    end: int
    text: str


def windows(
    context_index: int, text: str, budget: int, count_tokens: Any, *, overlap: int = 1
) -> list[Window]:
    """`text` cut into windows of whole sentences of at most `budget` tokens each, neighbours
    sharing `overlap` sentences.

    `count_tokens(texts)` returns the token count of each text. A sentence longer than the
    budget is a window of its own (the tokenizer truncates it); a text with no sentences
    (only code, say) is one window.
    """
    units = split_units(text)
    if not units:
        stripped = text.strip()
        if not stripped:
            return []
        start = text.index(stripped)
        return [Window(context_index, start, start + len(stripped), stripped)]
    # Each sentence is counted with the whitespace (or skipped block) that follows it, so
    # summed counts cover the window's text between its first and last sentence.
    pieces = [
        text[u.start : units[i + 1].start] if i + 1 < len(units) else text[u.start : u.end]
        for i, u in enumerate(units)
    ]
    sizes: list[int] = list(count_tokens(pieces))
    found: list[Window] = []
    first = 0
    while True:
        last, used = first, sizes[first]
        while last + 1 < len(units) and used + sizes[last + 1] <= budget:
            last += 1
            used += sizes[last]
        start, end = units[first].start, units[last].end
        found.append(Window(context_index, start, end, text[start:end]))
        if last + 1 >= len(units):
            return found
        first = max(last + 1 - overlap, first + 1)


class NLIJudge(BaseJudge):
    """A judge that scores each claim against the contexts with a local NLI model.

    Claims are the offline judge's (sentences and independent clauses, with exact spans). A
    claim is FULLY_SUPPORTED when its best window's entailment probability reaches
    `min_entailment`; otherwise CONTRADICTED when some window's contradiction probability
    reaches it; otherwise NO_EVIDENCE. Every verdict carries the best entailment probability
    (`ClaimVerdict.entailment`), so metrics ground claims by it, and quotes the window it rests
    on: the most contradicting one for CONTRADICTED, else the most entailing one.

    Args:
        model: a local folder or a Hugging Face hub id, loaded with `AutoTokenizer` and
            `AutoModelForSequenceClassification` (no remote code is run).
        min_entailment: the probability a verdict needs (0.70, as the grounding metrics use).
        batch_size: (claim, window) pairs scored at once.
        max_length: cap on tokens per pair; the tokenizer's own limit applies if lower.
        device: "cuda", "cpu", …; default CUDA when available, else the CPU.

    Raises:
        MissingExtraError: transformers or torch is not installed.
        ConfigError: the model cannot be loaded, or its labels name no entailment.
    """

    def __init__(
        self,
        model: str,
        *,
        min_entailment: float = DEFAULT_MIN_ENTAILMENT,
        batch_size: int = 16,
        max_length: int = MAX_LENGTH,
        device: str | None = None,
    ) -> None:
        if not 0 < min_entailment <= 1:
            raise ValueError(f"min_entailment must be in (0, 1], got {min_entailment}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise MissingExtraError(
                f"the NLI judge needs transformers and torch: {install_hint('nli')}"
            ) from exc
        self.source = model
        try:
            self._tokenizer = AutoTokenizer.from_pretrained(model)
            self._model = AutoModelForSequenceClassification.from_pretrained(model)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load the NLI model {model!r}: {exc}") from None
        config = self._model.config
        self.labels = label_map(dict(config.id2label), int(config.num_labels))
        limits = [max_length, int(getattr(self._tokenizer, "model_max_length", max_length))]
        positions = getattr(config, "max_position_embeddings", None)
        if isinstance(positions, int) and positions > 0:
            limits.append(positions)
        self.max_length = min(limits)
        self.min_entailment = min_entailment
        self.batch_size = batch_size
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._model.to(self.device)
        self._model.eval()
        self._torch = torch
        # One pass at a time: concurrent samples would fight over the cores (or the GPU), and a
        # fast tokenizer must not be used from two threads at once.
        self._lock = threading.Lock()
        self.pairs_scored = 0

    def __repr__(self) -> str:
        return f"NLIJudge({self.source!r}, min_entailment={self.min_entailment})"

    @property
    def spec(self) -> str:
        return f"nli:{self.source}"

    def describe(self) -> JudgeDescription:
        """The model, how its labels were read, the windowing and how much was scored."""
        return JudgeDescription(spec=self.spec, kind="nli", extra=self._model_details())

    def _model_details(self) -> dict[str, Any]:
        labels = self.labels
        return {
            "model": self.source,
            "device": self.device,
            "min_entailment": self.min_entailment,
            "max_length": self.max_length,
            "entailment_label": "sigmoid" if labels.sigmoid else labels.names[labels.entailment],
            "contradiction_label": (
                None if labels.contradiction is None else labels.names[labels.contradiction]
            ),
            "pairs_scored": self.pairs_scored,
        }

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """The offline judge's claims: sentences and clauses with exact spans."""
        return extract_claims(response)

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order; the model runs in a worker thread."""
        if not claims:
            return []
        return await asyncio.to_thread(self._verify, list(claims), list(contexts))

    def _verify(self, claims: list[Claim], contexts: list[str]) -> list[ClaimVerdict]:
        with self._lock:
            pairs: list[tuple[int, Window]] = []
            for number, claim in enumerate(claims):
                for window in self._windows(claim.text, contexts):
                    pairs.append((number, window))
            scores = self._score([(claims[n].text, w.text) for n, w in pairs])
        by_claim: list[list[tuple[Window, float, float | None]]] = [[] for _ in claims]
        for (number, window), (entail, contradict) in zip(pairs, scores, strict=True):
            by_claim[number].append((window, entail, contradict))
        return [self._decide(claim, found) for claim, found in zip(claims, by_claim, strict=True)]

    def _windows(self, claim: str, contexts: list[str]) -> list[Window]:
        claim_tokens = len(self._tokenizer(claim, add_special_tokens=False)["input_ids"])
        special = self._tokenizer.num_special_tokens_to_add(pair=True)
        budget = max(self.max_length - special - claim_tokens, 1)
        return [
            window
            for index, text in enumerate(contexts)
            for window in windows(index, text, budget, self._count_tokens)
        ]

    def _count_tokens(self, texts: list[str]) -> list[int]:
        encoded = self._tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def _score(self, pairs: list[tuple[str, str]]) -> list[tuple[float, float | None]]:
        """(entailment, contradiction) probabilities of each (claim, window) pair, the window
        being the premise."""
        torch = self._torch
        labels = self.labels
        found: list[tuple[float, float | None]] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            encoded = self._tokenizer(
                [window for _, window in batch],
                [claim for claim, _ in batch],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                logits = self._model(**encoded).logits.float()
            if labels.sigmoid:
                probs = torch.sigmoid(logits[:, 0]).cpu().tolist()
                found.extend((float(p), None) for p in probs)
                continue
            rows = torch.softmax(logits, dim=-1).cpu().tolist()
            for row in rows:
                contradiction = None if labels.contradiction is None else row[labels.contradiction]
                found.append((float(row[labels.entailment]), contradiction))
        self.pairs_scored += len(pairs)
        return found

    def _decide(
        self, claim: Claim, found: list[tuple[Window, float, float | None]]
    ) -> ClaimVerdict:
        if not found:
            return ClaimVerdict(
                claim.id, Verdict.NO_EVIDENCE, reason="no context was given", entailment=0.0
            )
        # max() keeps the first of equal scores, so ties go to the earlier window.
        window, entail, _ = max(found, key=lambda item: item[1])
        entail = _probability(entail)
        where = f"context {window.context_index + 1}"
        if entail >= self.min_entailment:
            return ClaimVerdict(
                claim.id,
                Verdict.FULLY_SUPPORTED,
                window.text,
                window.context_index,
                f"entailment {entail:.3f} ≥ {self.min_entailment:.2f} in {where}",
                entailment=entail,
            )
        rivals = [(w, c) for w, _, c in found if c is not None]
        if rivals:
            against, contradiction = max(rivals, key=lambda item: item[1])
            if contradiction >= self.min_entailment:
                return ClaimVerdict(
                    claim.id,
                    Verdict.CONTRADICTED,
                    against.text,
                    against.context_index,
                    f"contradiction {contradiction:.3f} ≥ {self.min_entailment:.2f} in context "
                    f"{against.context_index + 1}; best entailment {entail:.3f}",
                    entailment=entail,
                )
        return ClaimVerdict(
            claim.id,
            Verdict.NO_EVIDENCE,
            window.text,
            window.context_index,
            f"best entailment {entail:.3f} < {self.min_entailment:.2f} (in {where})",
            entailment=entail,
        )


def _probability(value: float) -> float:
    """`value` clamped to [0, 1]: float32 softmax can land a hair outside."""
    return 0.0 if math.isnan(value) else min(max(value, 0.0), 1.0)
