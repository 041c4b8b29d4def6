"""Tokens of Chinese, Japanese and Korean text, for a tokeniser built around spaces.

No spaces separate Chinese or Japanese words, and Korean glues particles and endings to them
("기간은", "처리됩니다"), so a whitespace word is no unit to compare. Without a dictionary the
robust unit is the character bigram: "返品期間" gives 返品, 品期, 期間, and a claim shares most of
its bigrams with a context that says the same thing. Around that:

- a number's counter, the first character after its digits (60日, 60天, 60일), is its unit;
- negations (不, 没, ません, 없) and "only" (仅, 只, のみ, だけ, 만) become cues, and
  function characters (的, 了) are dropped;
- Japanese hiragana is grammar and dropped; katakana runs (loanwords) stay whole words;
- Korean particles and endings are stripped before the bigrams are cut.

Spans index the text given, like the whitespace tokeniser's.
"""

from __future__ import annotations

import re

from vera.judges._offline._languages import Lexicon

_Token = tuple[str, str, int, int]

_CJK_RANGES = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f々〆"
)
_TOKEN = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)*)(?![A-Za-z])"
    r"|(?P<han>[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff々〆]+)"
    r"|(?P<kata>[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]+)"
    r"|(?P<hira>[\u3040-\u309f]+)"
    r"|(?P<hangul>[\uac00-\ud7af]+)"
    # Any other letters (Latin names in CJK text: "GmbHの間"), up to the next CJK character.
    rf"|(?P<word>[^\W\d_{_CJK_RANGES}]+(?:['\u2019][^\W\d_{_CJK_RANGES}]+)*)"
    r"|(?P<sym>[$€£%¥￥])"
)
_HIRAGANA_NEGATIONS = ("ません", "なかった", "ない")
_HANGUL_NEGATIONS = ("않", "없", "못")
# Particles and endings, stripped longest first: "처리됩니다" reads "처리", "기간은" "기간".
_ENDINGS = (
    "했습니다 되었습니다 입니다 습니다 합니다 됩니다 이었다 였다 이다 했다 된다 한다 "
    "이며 이고 하고 하며 에서는 에서 으로는 으로 에게 까지 부터 보다 처럼 이나 에는 "
    "하지 되지 하여 하면 해야 과 와 은 는 이 가 을 를 의 에 도 만 로 한 할 된 하는 되는 인"
)
_ONLY = "만"
_HANGUL_ENDINGS = tuple(sorted(_ENDINGS.split(), key=len, reverse=True))


def cjk_tokens(text: str, lexicon: Lexicon) -> list[_Token]:
    """`text`'s tokens as (kind, text, start, end), "num", "word" or "sym", with CJK runs cut
    into character bigrams and each negation as a word of `lexicon.negations`."""
    tokens: list[_Token] = []
    last_number_end = -1
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or ""
        raw, start, end = match.group(), match.start(), match.end()
        if kind in ("num", "word", "sym"):
            tokens.append((kind, raw, start, end))
        elif kind == "han":
            _han(raw, start, lexicon, tokens, unit=start == last_number_end)
        elif kind == "kata":
            tokens.append(("word", raw, start, end))
        elif kind == "hira":
            cue = next((c for c in _HIRAGANA_NEGATIONS if c in raw), None)
            if cue is not None:
                tokens.append(("word", cue, start, end))
            only = next((c for c in lexicon.exclusive if c in raw), None)
            if only is not None:
                tokens.append(("word", only, start, end))
        else:
            _hangul(raw, start, lexicon, tokens, unit=start == last_number_end)
        if kind == "num":
            last_number_end = end
    return tokens


def _han(run: str, offset: int, lexicon: Lexicon, tokens: list[_Token], *, unit: bool) -> None:
    """Cut a run of Han characters at negations and function characters into bigrams."""
    piece_start = 0
    for i, char in enumerate(run):
        cue = char in lexicon.negations or char in lexicon.exclusive
        if cue or char in lexicon.stopwords:
            _bigrams(run[piece_start:i], offset + piece_start, tokens, unit=unit)
            unit = False
            if cue:
                tokens.append(("word", char, offset + i, offset + i + 1))
            piece_start = i + 1
    _bigrams(run[piece_start:], offset + piece_start, tokens, unit=unit)


def _hangul(word: str, offset: int, lexicon: Lexicon, tokens: list[_Token], *, unit: bool) -> None:
    """A Korean word without its particle or ending, as bigrams; a negation as a cue."""
    if word == "안" or word.startswith("아니") or any(s in word for s in _HANGUL_NEGATIONS):
        tokens.append(("word", "않", offset, offset + len(word)))
        return
    stem = word
    for ending in _HANGUL_ENDINGS:
        if stem.endswith(ending) and len(stem) > len(ending):
            stem = stem[: -len(ending)]
            break
    if stem in lexicon.stopwords:
        return
    _bigrams(stem, offset, tokens, unit=unit)
    if word.endswith(_ONLY) and stem != word:
        # "메일 지원만": the particle 만 is Korean's "only", after what it restricts.
        tokens.append(("word", _ONLY, offset + len(word) - 1, offset + len(word)))


def _bigrams(piece: str, offset: int, tokens: list[_Token], *, unit: bool) -> None:
    if not piece:
        return
    if unit:
        # 60日, 60天, 60일: the counter right after a number is its unit.
        tokens.append(("word", piece[0], offset, offset + 1))
        piece, offset = piece[1:], offset + 1
    if len(piece) == 1:
        tokens.append(("word", piece, offset, offset + 1))
        return
    for i in range(len(piece) - 1):
        tokens.append(("word", piece[i : i + 2], offset + i, offset + i + 2))
