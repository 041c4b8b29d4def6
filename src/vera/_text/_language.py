"""Language identification: which language a response or context is written in.

Scripts that name their language settle it once they make up a fair share of the text's
letters (kana is Japanese, Hangul Korean, Han without kana Chinese, Thai Thai); anything else
goes to py3langid, a naive Bayes identifier over byte n-grams for 97 languages that ships
its model (2 MB) inside its package and needs only numpy: no download, about 60 µs a text
once loaded (it loads on first use, about a second). Short texts are where any identifier
errs ("Yes." reads as Kabyle), so a guess under `min_confidence` is no guess.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    """An ISO 639-1 code (None: no letters to tell by) and the identifier's confidence, 0-1."""

    code: str | None
    confidence: float


class _Identifier(Protocol):
    def classify(self, text: str) -> tuple[str, float]: ...


_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]")
_THAI = re.compile(r"[\u0e01-\u0e5b]")
# Any of the four above, to rule them all out in one pass.
_SCRIPTS = re.compile(
    r"[\u0e01-\u0e5b\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]"
)
_LETTER = re.compile(r"[^\W\d_]")
# The share of a text's letters that must be CJK or Thai for the script to settle its
# language: a Chinese sentence quoting "API" or a brand is still Chinese, but an English JSON
# record with a few Chinese characters in one review is English. One such character stands
# for a word of four or five Latin letters, hence a share well under a half.
_MIN_SCRIPT_SHARE = 0.2
# How much of the text is read: identification needs a few sentences, not a whole context
# (the model's time grows with the text: 0.6 ms for 300 characters, 3.4 ms for 2000).
_SAMPLE_CHARS = 2000
_MODEL_CHARS = 600
_PROFILE_CHARS = 300
_WORD = re.compile(r"[^\W\d_]+")
# The commonest function words of each language the function-word check can settle.
_PROFILES = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the and of to is are for with that this it by from be has have was were which per "
        "on at as or an not all can will",
        "de": "der die das und ist nicht mit von den dem des sich auf für eine ein zu im wird",
        "fr": "le les et est des une du que pour dans sur pas par au aux sont avec ce qui",
        "es": "el los las y es que en una por para con del al se son lo está como",
        "pt": "o os as e é que em um uma por para com do da dos das não são ao",
        "it": "il le e è di che in un una per con del della dei gli sono non al alla",
        "nl": "de het een en is van dat op te voor met zijn niet aan er ook wordt naar",
    }.items()
}

_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "pt": "Portuguese",
    "it": "Italian", "nl": "Dutch", "ja": "Japanese", "zh": "Chinese", "ko": "Korean",
    "ru": "Russian", "uk": "Ukrainian", "pl": "Polish", "cs": "Czech", "sv": "Swedish",
    "da": "Danish", "no": "Norwegian", "nb": "Norwegian Bokmål", "fi": "Finnish",
    "tr": "Turkish", "el": "Greek", "he": "Hebrew", "ar": "Arabic", "fa": "Persian",
    "hi": "Hindi", "bn": "Bengali", "ur": "Urdu", "th": "Thai", "vi": "Vietnamese",
    "id": "Indonesian", "ms": "Malay", "ro": "Romanian", "hu": "Hungarian", "bg": "Bulgarian",
    "ca": "Catalan", "sw": "Swahili", "ta": "Tamil", "te": "Telugu", "mr": "Marathi",
}  # fmt: skip


def language_name(code: str) -> str:
    """ "Japanese" for "ja"; the code itself for a language without a name here."""
    return _NAMES.get(code, code)


@lru_cache(maxsize=1024)
def guess_language(text: str) -> LanguageGuess:
    """The language `text` is written in, with the identifier's confidence.

    Cached: a run identifies each response and its contexts once for the sample's record and
    again in the offline judge."""
    sample = text[:_SAMPLE_CHARS]
    if _SCRIPTS.search(sample) and _script_share(sample) >= _MIN_SCRIPT_SHARE:
        return _by_script(sample)
    if not _LETTER.search(sample):
        return LanguageGuess(None, 0.0)
    profiled, _ = _by_function_words(sample[:_PROFILE_CHARS])
    if profiled is not None:
        return LanguageGuess(profiled, 0.9)
    code, confidence = _identifier().classify(sample[:_MODEL_CHARS])
    leading = None if code in _PROFILES else _by_function_words(sample)[1]
    if leading is not None:
        # The model's byte n-grams are swayed by foreign names ("Ю́рий Никола́евич", a
        # Lithuanian league): a text whose function words are mostly one profiled
        # language's is in that language, not in Nigerian Pidgin.
        return LanguageGuess(leading, 0.6)
    return LanguageGuess(code, float(confidence))


def _script_share(sample: str) -> float:
    """The share of `sample`'s letters written in the CJK or Thai scripts."""
    scripts = len(_SCRIPTS.findall(sample))
    return scripts / max(len(_LETTER.findall(sample)), 1)


def _by_script(sample: str) -> LanguageGuess:
    if _KANA.search(sample):
        return LanguageGuess("ja", 1.0)
    if _HANGUL.search(sample):
        return LanguageGuess("ko", 1.0)
    if _HAN.search(sample):
        return LanguageGuess("zh", 1.0)
    return LanguageGuess("th", 1.0)


def _by_function_words(sample: str) -> tuple[str | None, str | None]:
    """The language whose commonest function words fill `sample` (a text's opening), when one
    does so clearly: most texts in the offline judge's Latin-script languages are settled here in
    tens of microseconds instead of the model's milliseconds. Second, the language whose
    function words lead, if any does by twice the next one's (None otherwise)."""
    words = _WORD.findall(sample.lower())
    if len(words) < 4:
        return None, None
    hits = dict.fromkeys(_PROFILES, 0)
    for word in words:
        for code in _MARKED.get(word, ()):
            hits[code] += 1
    ranked = sorted(hits.items(), key=lambda item: item[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < 3 or top < 2 * second:
        return None, None
    return (best if top >= 0.15 * len(words) else None), best


def identify(text: str, *, min_confidence: float = 0.5) -> str | None:
    """The ISO 639-1 code of `text`'s language, or None when the guess is under
    `min_confidence` (a text too short or too mixed to tell)."""
    found = guess_language(text)
    return found.code if found.confidence >= min_confidence else None


_MARKED: dict[str, tuple[str, ...]] = {}
for _code, _marks in _PROFILES.items():
    for _mark in _marks:
        _MARKED[_mark] = (*_MARKED.get(_mark, ()), _code)


@cache
def _identifier() -> _Identifier:
    # Imported here: loading the model costs about a second that `import vera` should not pay.
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    try:
        identifier: _Identifier = LanguageIdentifier.from_modelpath(
            MODEL_DIR / MODEL_FILE, norm_probs=True
        )
    except OSError:
        # py3langid decompresses its model through a temporary file; where no file can be
        # written (a full disk, a quota, a file-size limit) it is read in memory instead (68 MB
        # for a moment), so that a full disk stops a run at the store that needs room, not here.
        identifier = _identifier_in_memory(LanguageIdentifier, MODEL_DIR / MODEL_FILE)
    return identifier


def _identifier_in_memory(identifier_class: Any, path: Path) -> _Identifier:
    import lzma

    import numpy as np
    from py3langid.modelio import _to_array

    with lzma.open(path) as packed, np.load(io.BytesIO(packed.read())) as data:
        identifier: _Identifier = identifier_class(
            np.asarray(data["ptc"]),
            np.asarray(data["pc"]),
            data["classes"].tolist(),
            _to_array(data["nextmove"]),
            data["out_feat"].tolist(),
            norm_probs=True,
            tk_row=_to_array(data["nextmove_row"]),
        )
    return identifier
