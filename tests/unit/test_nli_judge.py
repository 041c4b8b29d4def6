"""`NLIJudge` with a real, tiny BERT built in the test (`tests.support.tiny_nli`): real
loading, tokenising and inference, with expected values computed here from the model itself."""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without
from tests.support.tiny_nli import build_model

from vera import Claim, ConfigError, VeraError, Verdict
from vera._types import DEFAULT_MIN_ENTAILMENT
from vera.judges import NLIJudge, create_judge
from vera.judges._nli import label_map, windows
from vera.providers._base import MissingExtraError

WHITEBOX = "the providers' own clients, retries, cache and batches"


def verify(judge: NLIJudge, claims: list[str], contexts: list[str]) -> list[Any]:
    found = [Claim(f"c{i}", text) for i, text in enumerate(claims, start=1)]
    return asyncio.run(judge.verify_claims(found, contexts))


def nli(path: Path) -> NLIJudge:
    judge = create_judge(f"nli:{path}")
    assert isinstance(judge, NLIJudge)
    return judge


def expected_entailment(path: Path, claim: str, premise: str) -> float:
    """The entailment probability computed here, with the model itself."""
    torch = pytest.importorskip("torch", reason=without("nli"))
    transformers = pytest.importorskip("transformers", reason=without("nli"))
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.no_grad():
        logits = model(**tokenizer(premise, claim, return_tensors="pt")).logits[0]
    return float(torch.softmax(logits, dim=-1)[0])


@pytest.mark.slow
def test_random_model_entailment_is_the_softmax_of_its_own_logits(tmp_path: Path) -> None:
    path = build_model(tmp_path / "m")
    judge = nli(path)
    contexts = ["Paris is the capital of France.", "The old bridge is in the town.", "  "]
    claims = ["Paris is in France.", "The market is new."]
    verdicts = verify(judge, claims, contexts)
    assert [v.claim_id for v in verdicts] == ["c1", "c2"]
    for claim, verdict in zip(claims, verdicts, strict=True):
        scores = [expected_entailment(path, claim, c) for c in contexts[:2]]
        best = max(range(2), key=lambda i: scores[i])
        assert verdict.entailment is not None and 0.0 <= verdict.entailment <= 1.0
        assert verdict.entailment == pytest.approx(scores[best], abs=1e-5)
        assert (verdict.evidence, verdict.context_index) == (contexts[best], best)
        assert verdict.verdict in {
            Verdict.FULLY_SUPPORTED,
            Verdict.NO_EVIDENCE,
            Verdict.CONTRADICTED,
        }
    details = judge.describe().extra
    assert details["entailment_label"] == "entailment"
    assert details["contradiction_label"] == "contradiction"
    assert details["pairs_scored"] == 4  # two claims against two non-empty contexts
    assert details["min_entailment"] == DEFAULT_MIN_ENTAILMENT == 0.70


@pytest.mark.slow
def test_long_context_is_windowed_and_the_window_holding_the_evidence_wins(
    tmp_path: Path,
) -> None:
    path = build_model(tmp_path / "m", zebra=True, model_max_length=40)
    judge = nli(path)
    assert judge.max_length == 40
    filler = " ".join(f"The {w} bridge is old." for w in ("north", "south", "east", "west") * 3)
    last = "The zebra is in the town hall."
    context = f"{filler} {last}"
    claim = "The town hall is new."
    [verdict] = verify(judge, [claim], ["The river runs fast.", context])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED
    assert verdict.context_index == 1
    assert last in verdict.evidence and verdict.evidence in context
    assert verdict.evidence != context and "north bridge" not in verdict.evidence
    assert judge.describe().extra["pairs_scored"] > 3  # several windows of the long context
    # The window with the zebra sentence, scored here by the model itself.
    assert verdict.entailment == pytest.approx(
        expected_entailment(path, claim, verdict.evidence), abs=1e-5
    )
    # Without the zebra every pair scores exactly a third: no support.
    [plain] = verify(judge, [claim], [filler])
    assert plain.verdict is Verdict.NO_EVIDENCE
    assert plain.entailment == pytest.approx(1 / 3, abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("probabilities", "verdict"),
    [
        ((0.71, 0.145, 0.145), Verdict.FULLY_SUPPORTED),
        ((0.705, 0.15, 0.145), Verdict.FULLY_SUPPORTED),
        ((0.695, 0.155, 0.15), Verdict.NO_EVIDENCE),
        ((0.10, 0.15, 0.75), Verdict.CONTRADICTED),
        ((0.10, 0.21, 0.69), Verdict.NO_EVIDENCE),
    ],
)
def test_the_070_threshold_decides_the_verdict(
    tmp_path: Path, probabilities: tuple[float, float, float], verdict: Verdict
) -> None:
    bias = [math.log(p) for p in probabilities]
    judge = nli(build_model(tmp_path / "m", bias=bias))
    [found] = verify(judge, ["Paris is in France."], ["Paris is the capital of France."])
    assert found.verdict is verdict
    assert found.entailment == pytest.approx(probabilities[0], abs=1e-5)
    assert found.evidence == "Paris is the capital of France." and found.context_index == 0


@pytest.mark.slow
def test_one_logit_model_reads_sigmoid_as_support(tmp_path: Path) -> None:
    logit = math.log(0.8 / 0.2)
    judge = nli(build_model(tmp_path / "m", labels={0: "LABEL_0"}, bias=[logit]))
    [found] = verify(judge, ["Paris is in France."], ["Paris is the capital of France."])
    assert found.entailment == pytest.approx(0.8, abs=1e-5)
    assert found.verdict is Verdict.FULLY_SUPPORTED
    assert judge.describe().extra["entailment_label"] == "sigmoid"


@pytest.mark.slow
def test_no_context_means_no_evidence(tmp_path: Path) -> None:
    judge = nli(build_model(tmp_path / "m"))
    [found] = verify(judge, ["Paris is in France."], [])
    assert found.verdict is Verdict.NO_EVIDENCE and found.entailment == 0.0
    assert asyncio.run(judge.verify_claims([], ["x"])) == []


@pytest.mark.slow
def test_claims_are_the_offline_judges(tmp_path: Path) -> None:
    judge = nli(build_model(tmp_path / "m"))
    response = "Paris is in France. I hope this helps!"
    claims = asyncio.run(judge.extract_claims(response))
    assert [(c.id, c.text, c.span) for c in claims] == [("c1", "Paris is in France.", (0, 19))]


@pytest.mark.parametrize(
    ("id2label", "entailment", "contradiction", "sigmoid"),
    [
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, 0, 2, False),
        ({0: "contradiction", 1: "entailment", 2: "neutral"}, 1, 0, False),
        ({0: "not_entailment", 1: "entailment"}, 1, None, False),
        ({0: "LABEL_0", 1: "LABEL_1"}, 1, None, False),
        ({0: "hallucinated", 1: "consistent"}, 1, None, False),
        ({0: "LABEL_0"}, 0, None, True),
    ],
)
def test_label_mapping(
    id2label: dict[int, str], entailment: int, contradiction: int | None, sigmoid: bool
) -> None:
    found = label_map(id2label, len(id2label))
    assert (found.entailment, found.contradiction, found.sigmoid) == (
        entailment,
        contradiction,
        sigmoid,
    )


def test_three_labels_without_entailment_are_refused() -> None:
    with pytest.raises(ConfigError, match="entailment"):
        label_map({0: "a", 1: "b", 2: "c"}, 3)


def test_windows_pack_sentences_with_one_sentence_overlap() -> None:
    text = "One two three. Four five. Six seven eight. Nine. Ten eleven twelve thirteen."

    def count(texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    found = windows(4, text, 5, count)
    # Neighbours share one sentence; each window is as many whole sentences as fit in 5 words.
    assert [w.text for w in found] == [
        "One two three. Four five.",
        "Four five. Six seven eight.",
        "Six seven eight. Nine.",
        "Nine. Ten eleven twelve thirteen.",
    ]
    assert all(w.context_index == 4 and text[w.start : w.end] == w.text for w in found)
    # A sentence over the budget is a window of its own; a short text is one window.
    assert [w.text for w in windows(0, text, 2, count)][-1] == "Ten eleven twelve thirteen."
    assert [w.text for w in windows(0, text, 100, count)] == [text]
    assert windows(0, "   ", 5, count) == []


def test_missing_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import fails as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'vera-eval\[nli\]'") as caught:
        create_judge("nli:some/model")
    assert isinstance(caught.value, VeraError)


def test_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nli:PATH_OR_HUB_ID"):
        create_judge("nli:")
    pytest.importorskip("transformers", reason=without("nli"))
    with pytest.raises(ConfigError, match="cannot load the NLI model"):
        create_judge(f"nli:{tmp_path / 'no-such-model'}")
