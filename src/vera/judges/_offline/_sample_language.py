"""Which lexicon the offline judge reads a sample with, or why it cannot judge the sample.

The response's language picks the lexicon. A response or contexts in a language outside
`SUPPORTED`, or a response in one language checked against contexts in another, is refused:
the judge compares words, and English rules on other words would give confident verdicts that
mean nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from vera._text._language import guess_language, language_name
from vera._types import Claim, ClaimVerdict, Verdict
from vera._types._errors import JudgeError
from vera.judges._offline._languages import ENGLISH, SUPPORTED, Lexicon, lexicon_for

UNSUPPORTED_LANGUAGE = "unsupported_language"
"""The reason every verdict of a refused sample starts with."""

# Below this confidence a guess is no guess, and the sample is read as English, as before
# languages were told apart: a very short text ("OK.") is no evidence of another language.
_MIN_CONFIDENCE = 0.5
_LLM_HINT = "use an LLM judge, which reads any language (--judge openai:MODEL or anthropic:MODEL)"


class UnsupportedLanguageError(JudgeError):
    """The offline judge cannot read this sample's language; the sample is not scored.

    `verdicts` holds one NO_EVIDENCE verdict per claim, its reason starting with
    "unsupported_language", for a caller that wants to show the claims all the same.
    """

    def __init__(self, message: str, language: str, verdicts: Sequence[ClaimVerdict]) -> None:
        super().__init__(message)
        self.language = language
        self.verdicts = tuple(verdicts)


def response_lexicon(response: str, forced: str | None = None) -> Lexicon | None:
    """The lexicon of `response`'s language; None when the judge does not read it."""
    code = forced if forced is not None else _language(response)
    return ENGLISH if code is None else lexicon_for(code)


def sample_lexicon(
    claims: Sequence[Claim], contexts: Sequence[str], forced: str | None = None
) -> Lexicon:
    """The lexicon to judge `claims` against `contexts` with.

    Raises:
        UnsupportedLanguageError: the response or the contexts are in a language outside
            `SUPPORTED`, or in two different languages.
    """
    said = " ".join(claim.text for claim in claims)
    response = forced if forced is not None else _language(said)
    context = forced if forced is not None else _language("\n".join(contexts))
    if response != context and context is not None and _too_short(said, response):
        # A few words ("ten weeks", "Andrzej Żuławski") are no evidence of a language: the
        # sample is in the language most of its text is in, the contexts'.
        response = context
    for code, what in ((response, "response is"), (context, "contexts are")):
        if code is not None and lexicon_for(code) is None:
            raise _refuse(claims, code, f"the {what} in {language_name(code)} ({code})")
    if response is not None and context is not None and response != context:
        problem = (
            f"the response is in {language_name(response)} and the contexts in "
            f"{language_name(context)}: the offline judge compares words and cannot judge "
            "across languages"
        )
        raise _refuse(claims, response, problem)
    code = response or context
    lexicon = ENGLISH if code is None else lexicon_for(code)
    return lexicon if lexicon is not None else ENGLISH


_SHORT_WORDS = 5
"""Fewer words than this in a Latin-script response (a name, a date, a phrase) do not tell
its language against contexts that do; a sentence does, and so does any answer in another
script."""
_SHORT_UNREAD_WORDS = 8
"""The same for a response guessed to be in a language the judge does not read: a short
sentence about "Lietuvos krepšinio lyga" is more likely the contexts' language with
foreign names in it."""


def _too_short(text: str, guess: str | None) -> bool:
    if not all(c < "\u0250" for c in text if c.isalpha()):
        return False
    words = len(text.split())
    unread = guess is not None and lexicon_for(guess) is None
    return words < _SHORT_WORDS or (unread and words < _SHORT_UNREAD_WORDS)


def _language(text: str) -> str | None:
    guess = guess_language(text)
    return guess.code if guess.confidence >= _MIN_CONFIDENCE else None


def _refuse(claims: Sequence[Claim], code: str, problem: str) -> UnsupportedLanguageError:
    supported = ", ".join(SUPPORTED)
    message = (
        f"{UNSUPPORTED_LANGUAGE}: {problem} (the offline judge reads {supported}; see "
        f"docs/languages.md). The sample is not scored: {_LLM_HINT}, "
        "or force the language with --language if it was misidentified"
    )
    verdicts = [
        ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, reason=f"{UNSUPPORTED_LANGUAGE}: {problem}")
        for claim in claims
    ]
    return UnsupportedLanguageError(message, code, verdicts)
