"""A tiny BERT sequence classifier and WordPiece tokenizer, built and saved for NLI tests.

The model is randomly initialised, or has weights set by hand so that its output is known: a
constant (the classifier's bias alone), or a signal that rises when the input holds the word
"zebra" (every token averaged into [CLS], "zebra" the only token with a component along the
first hidden dimension, which the classifier reads), or only when the claim holds it.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from tests.support.extras import without

__all__ = ["LABELS", "VOCAB", "build_model"]

WORDS = [
    "the",
    "a",
    "is",
    "in",
    "of",
    "and",
    "to",
    "on",
    "zebra",
    "paris",
    "france",
    "capital",
    "city",
    "river",
    "runs",
    "fast",
    "slow",
    "bank",
    "refund",
    "window",
    "days",
    "card",
    "north",
    "south",
    "east",
    "west",
    "bridge",
    "old",
    "new",
    "town",
    "hall",
    "market",
]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *WORDS]
LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
HIDDEN = 32


def build_model(
    path: Path,
    *,
    seed: int = 0,
    labels: dict[int, str] | None = None,
    bias: list[float] | None = None,
    zebra: bool = False,
    claim_zebra: bool = False,
    model_max_length: int | None = None,
) -> Path:
    """Save a tiny BERT classifier and its WordPiece tokenizer to `path`.

    `bias` fixes the logits (the classifier's weights are zeroed); `zebra` wires the model so
    that entailment rises with the share of "zebra" tokens in the input and is exactly a third
    without one. `claim_zebra` counts only a "zebra" of the claim (the pair's second
    segment): a claim saying "zebra" is entailed whatever the premise, any other scores about a
    third, so a premise may hold "zebra" for the offline judges to find a copied claim.
    """
    torch = pytest.importorskip("torch", reason=without("nli"))
    transformers = pytest.importorskip("transformers", reason=without("nli"))
    path.mkdir(parents=True, exist_ok=True)
    vocab = path.parent / f"{path.name}-vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    extra: dict[str, Any] = {}
    if model_max_length is not None:
        extra["model_max_length"] = model_max_length
    # transformers 5 reads the vocabulary from `vocab`; 4.x from `vocab_file` (5 ignores it).
    takes = inspect.signature(transformers.BertTokenizerFast.__init__).parameters
    extra["vocab" if "vocab" in takes else "vocab_file"] = str(vocab)
    tokenizer = transformers.BertTokenizerFast(**extra)
    assert len(tokenizer) == len(VOCAB)  # the vocabulary was read, not left at its defaults
    id2label = labels or LABELS
    config = transformers.BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={name: i for i, name in id2label.items()},
    )
    torch.manual_seed(seed)
    model = transformers.BertForSequenceClassification(config)
    with torch.no_grad():
        if zebra or claim_zebra:
            _wire_zebra(model, tokenizer, torch)
        if claim_zebra:
            _wire_claim_zebra(model, tokenizer)
        if bias is not None:
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _wire_zebra(model: Any, tokenizer: Any, torch: Any) -> None:
    bert = model.bert
    words = bert.embeddings.word_embeddings.weight
    # After the embedding LayerNorm, dimension 0 is 0 for every token but "zebra".
    words[:, 0] = words[:, 1:].mean(dim=1)
    zebra = tokenizer.convert_tokens_to_ids("zebra")
    words[zebra] = 0.0
    words[zebra, 0] = 10.0
    bert.embeddings.position_embeddings.weight.zero_()
    bert.embeddings.token_type_embeddings.weight.zero_()
    eye = torch.eye(HIDDEN)
    for layer in bert.encoder.layer:
        attention = layer.attention
        # Zero queries and keys: every token attends to all tokens equally, so [CLS] becomes
        # their mean; the feed-forward part adds nothing.
        for part in (attention.self.query, attention.self.key):
            part.weight.zero_()
            part.bias.zero_()
        for part in (attention.self.value, attention.output.dense):
            part.weight.copy_(eye)
            part.bias.zero_()
        layer.output.dense.weight.zero_()
        layer.output.dense.bias.zero_()
    bert.pooler.dense.weight.copy_(eye)
    bert.pooler.dense.bias.zero_()
    model.classifier.weight.zero_()
    model.classifier.weight[0, 0] = 10.0  # entailment
    model.classifier.weight[2, 0] = -10.0  # contradiction
    model.classifier.bias.zero_()


def _wire_claim_zebra(model: Any, tokenizer: Any) -> None:
    embeddings = model.bert.embeddings
    words = embeddings.word_embeddings.weight
    # "zebra" becomes the zero vector, so it has a component along dimension 0 only when the
    # claim's segment embedding is added to it; every other word is scaled up so far that the
    # same segment embedding leaves its dimension 0 near 0 after the LayerNorm.
    words.mul_(10000.0)
    words[tokenizer.convert_tokens_to_ids("zebra")] = 0.0
    segments = embeddings.token_type_embeddings.weight
    segments.zero_()
    segments[1, 0] = 1.0
