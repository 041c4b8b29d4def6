"""An offline extractive "generator": it writes no text of its own, it selects sentences.

Each sentence of the retrieved chunks is scored by the share of the query's content words it
contains; the best few are copied verbatim, in the chunks' order, each followed by a `[n]`
marker naming its chunk. When no sentence covers enough of the query it abstains. This gives
pipelines a deterministic, free, network-less answerer: a baseline for LLM generators, and a
way to run and test a whole pipeline offline. Its answers are faithful by construction, so
what the verifier finds wrong in them is retrieval's doing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vera._baselines._chunking import Chunk
from vera._text._segment import split_units
from vera._types import Context
from vera.judges._offline._tokens import analyse

ABSTENTION = "The provided documents do not contain information about this question."
"""The answer when no sentence qualifies; VERA's abstention detector recognises it."""


@dataclass(frozen=True, slots=True)
class SelectedSentence:
    """A sentence copied from a chunk: `chunks[chunk_index].text[start:end] == text`.

    `overlap` is the share of the query's content words the sentence contains.
    """

    text: str
    chunk_index: int
    start: int
    end: int
    overlap: float

    @property
    def marker(self) -> str:
        """The citation marker: `[n]`, n being the chunk's 1-based position in the input."""
        return f"[{self.chunk_index + 1}]"


@dataclass(frozen=True, slots=True)
class ExtractiveAnswer:
    """The answer text, the sentences it is made of (in order) and whether it abstained."""

    text: str
    sentences: tuple[SelectedSentence, ...]
    abstained: bool


def extractive_answer(
    query: str,
    chunks: Sequence[Chunk | Context],
    *,
    max_sentences: int = 3,
    min_overlap: float = 0.3,
    cite: bool = True,
) -> ExtractiveAnswer:
    """Answer `query` with at most `max_sentences` sentences copied from `chunks`.

    A sentence qualifies when it holds at least `min_overlap` of the query's content words
    (stemmed, stopwords ignored, as the offline judge reads them) and at least one of them.
    Query words that name the sentence's document (words of the chunk's title) are left out
    of that share: they chose the document, they do not locate the answer in it. The best
    qualifying sentences win (ties go to the earlier one) and are output in the
    chunks' order, so the answer reads as the sources do. Only statements are candidates:
    headings, table rows, questions and lines ending in ":" say nothing on their own, nor
    does a sentence with no content word beyond the query's ("Governing Law."). A
    sentence repeated in overlapping chunks counts once, cited to its first chunk. With
    `cite`, each sentence is followed by " [n]", n the 1-based index of its chunk in `chunks`
    (how RAG prompts number passages, and how VERA's citation metrics resolve a number).

    When nothing qualifies, or the query has no content words, the answer is `ABSTENTION`
    with `abstained=True`: saying the documents do not answer is right for a question they
    cannot answer, and better than quoting unrelated text.
    """
    if isinstance(max_sentences, bool) or not isinstance(max_sentences, int) or max_sentences < 1:
        raise ValueError(f"max_sentences must be a positive integer, got {max_sentences!r}")
    if not 0.0 <= min_overlap <= 1.0:
        raise ValueError(f"min_overlap must be between 0 and 1, got {min_overlap}")
    wanted = analyse(query).content
    if not wanted:
        return ExtractiveAnswer(ABSTENTION, (), abstained=True)

    candidates: list[SelectedSentence] = []
    seen: set[str] = set()
    for index, chunk in enumerate(chunks):
        focus = _focus(wanted, chunk)
        text = chunk.text
        for unit in split_units(text):
            sentence = text[unit.start : unit.end]
            if not unit.claimable or sentence in seen:
                continue
            seen.add(sentence)
            content = analyse(sentence).content
            shared = len(focus & content)
            overlap = shared / len(focus)
            # A sentence made only of the query's own words ("Governing Law.") cannot answer it.
            if shared and overlap >= min_overlap and content - wanted:
                candidates.append(SelectedSentence(sentence, index, unit.start, unit.end, overlap))
    if not candidates:
        return ExtractiveAnswer(ABSTENTION, (), abstained=True)

    # `candidates` is in the chunks' order, so a stable sort by score keeps earlier ones first
    # among equals, and sorting the winners by position restores reading order.
    ranked = sorted(enumerate(candidates), key=lambda pair: -pair[1].overlap)[:max_sentences]
    chosen = tuple(sentence for _, sentence in sorted(ranked, key=lambda pair: pair[0]))
    parts = (f"{s.text} {s.marker}" if cite else s.text for s in chosen)
    return ExtractiveAnswer(" ".join(parts), chosen, abstained=False)


def _focus(wanted: frozenset[str], chunk: Chunk | Context) -> frozenset[str]:
    """The query words a sentence of `chunk` is scored on: those not naming its document.

    "What is the fee under the Brightwater-Corvane services agreement?" names the document
    to pick it (retrieval's job) and asks about the fee: scored on every word, the contract's
    opening sentence, which names both parties and the agreement, would beat the sentence
    stating the fee. Words of the chunk's title (a `Chunk`'s title, else a context's source)
    are left out, unless they are all the query has.
    """
    title = chunk.title if isinstance(chunk, Chunk) else chunk.source
    if not title:
        return wanted
    return (wanted - analyse(title).content) or wanted
