"""Abstention: whether a response, or one of its sentences, declines to answer from the sources.

Both sides need this rule and must agree on it: the offline judge drops such sentences from the
claims it checks, and the answer metrics score an abstention against an unanswerable question.

- `is_about_sources` tells whether a text speaks about the retrieved material, not the world.
- `abstains` tells whether any sentence of a response is such a text.
"""

from __future__ import annotations

import re

from vera._text._segment import split_units

_SOURCES = (
    r"(?:documents?|sources?|context|contexts|passages?|clauses?|abstracts?|texts?|excerpts?"
    r"|materials?|information|papers?|studies|reports?|records?|docs|documentation)"
)
# Abstentions ("the documents do not specify X") and remarks that the sources disagree speak
# about the retrieved material, not about the world: an abstention is the right answer to an
# unanswerable question, so it must not count as an unsupported claim.
_ABOUT_SOURCES = re.compile(
    rf"\b{_SOURCES}\b[^.]*?\b(?:do(?:es)?\s+not|don't|doesn't|never|neither|nor)\s+"
    r"(?:\w+\s+){0,2}?(?:specify|specifies|mention|mentions|state|states|say|says|include"
    r"|includes|contain|contains|provide|provides|address|addresses|cover|covers|discuss"
    r"|discusses|report|reports|give|gives|describe|describes|indicate|indicates)\b"
    rf"|\b{_SOURCES}\b[^.]*?\b(?:says?|states?|mentions?|reports?)\s+nothing\b"
    r"|\b(?:no|not\s+enough)\s+information\b"
    r"|\bnot\s+(?:specified|mentioned|stated|provided|addressed|covered|reported|given)\s+in\b"
    r"|^\s*i\s+(?:do\s+not|don't|cannot|can't)\s+(?:know|find|determine|answer)\b"
    r"|\b(?:i\s+am|i'm|we\s+are|we're)\s+(?:unable|not\s+able)\s+to\s+"
    r"(?:answer|find|determine|say)\b"
    r"|(?:^|\bit\s+is\s+|\bit's\s+)unable\s+to\s+(?:answer|provide|determine|give)\b"
    r"|\b(?:cannot|can't)\s+be\s+(?:determined|answered)\s+from\b"
    rf"|\b{_SOURCES}\s+(?:disagree|conflict|differ|contradict\s+each\s+other)\b"
    rf"|\b{_SOURCES}\s+(?:reach|draw|report)\s+(?:opposite|conflicting|different)\b",
    re.IGNORECASE,
)
_ABOUT_SOURCES_CUES = (
    "not",
    "n't",
    "never",
    "neither",
    "nor",
    "nothing",
    "information",
    "unable",
    "disagree",
    "conflict",
    "differ",
    "contradict",
    "opposite",
)
"""Every match of `_ABOUT_SOURCES` holds one of these, lowercased: most claims hold none, and
the expression costs a quarter of a millisecond on each."""
# The same declines in the offline judge's other languages (docs/languages.md): "no
# information", "the sources do not mention", "I do not know", each as its speakers say it.
_ABOUT_SOURCES_ELSEWHERE = re.compile(
    # German
    r"\bkeine\s+(?:weiteren\s+)?(?:Informationen|Angaben)\b"
    r"|\b(?:Dokumente|Quellen|Kontexte?|Unterlagen|Texte?)\b[^.]*?\b(?:nicht|keine)\b"
    r"[^.]*?\b(?:angegeben|erwähnt|genannt|enthalten|beschrieben)\b"
    r"|\b(?:weiß|wissen)\s+(?:ich|wir)\s+nicht\b|\bkann\s+(?:ich|man)\s+nicht\s+"
    r"(?:beantworten|sagen|bestimmen)\b"
    # French
    r"|\baucune\s+information\b|\bpas\s+d['’]informations?\b"
    r"|\bne\s+(?:précisent|précise|mentionnent|mentionne|indiquent|indique|contiennent"
    r"|contient|disent|dit|donnent|donne)\s+pas\b"
    r"|\b(?:je|nous)\s+ne\s+(?:sais|savons|peux|pouvons)\s+pas\b"
    # Spanish and Portuguese
    r"|\b(?:no|não)\s+(?:hay|há|se\s+dispone\s+de)\s+(?:\w+\s+)?informa(?:ción|ções|ção)\b"
    r"|\b(?:ninguna|nenhuma)\s+informa(?:ción|ção)\b"
    r"|\b(?:no|não)\s+(?:especifican?|especificam|mencionan?|mencionam|indican?|indicam"
    r"|dicen|dizem|contienen|contêm|se\s+(?:menciona|especifica|indica)|é\s+mencionad[oa])\b"
    r"|\b(?:no|não)\s+(?:lo\s+)?(?:sé|sei)\b"
    r"|\b(?:no\s+puedo|não\s+(?:posso|é\s+possível))\s+(?:responder|determinar)\b"
    # Italian
    r"|\bnessuna\s+informazione\b|\bnon\s+(?:ci|vi)\s+sono\s+informazioni\b"
    r"|\bnon\s+(?:specificano|specifica|menzionano|menziona|indicano|indica|dicono|dice"
    r"|contengono|contiene|(?:è|viene)\s+(?:indicat|menzionat|specificat)[oa])\b"
    r"|\bnon\s+(?:lo\s+)?so\b|\bnon\s+(?:è\s+possibile|posso)\s+(?:rispondere|determinare)\b"
    # Dutch
    r"|\bgeen\s+informatie\b|\b(?:documenten|bronnen|context|teksten)\s+(?:vermelden|noemen"
    r"|specificeren|bevatten|geven|zeggen)\b[^.]*?\b(?:niet|geen)\b"
    r"|\b(?:weet|weten)\s+(?:ik|we)\s+(?:het\s+)?niet\b"
    r"|\bkan\s+ik\s+niet\s+(?:beantwoorden|zeggen)\b"
    # Japanese, Chinese, Korean: no word boundaries to lean on.
    r"|情報(?:は|が)(?:ありません|ない|見つかりません)|記載(?:されていません|がありません|はありません)"
    r"|言及(?:されていません|がありません)|(?:わかりません|分かりません)|答えられません"
    r"|没有(?:提供|提到|说明|相关信息|信息)|未(?:提及|提供|说明)|无法(?:回答|确定)|不知道"
    r"|정보가\s*없습니다|언급(?:되어\s*있지\s*않|하지\s*않)|알\s*수\s*없습니다"
    r"|답변할\s*수\s*없습니다|나와\s*있지\s*않",
    re.IGNORECASE,
)


def abstains(response: str, language: str | None = None) -> bool:
    """Whether `response` declines to answer from the sources ("The documents do not say…").

    True when any sentence is an abstention, even if others add facts: those facts are still
    judged as claims, so an abstention cannot hide a hallucination. `language` as for
    `is_about_sources`.
    """
    return any(is_about_sources(response[u.start : u.end], language) for u in split_units(response))


def is_about_sources(text: str, language: str | None = None) -> bool:
    """Whether `text` speaks about the retrieved material rather than the world.

    True for abstentions ("The provided documents do not specify a renewal fee.", "There is
    no information about X.") and for remarks that the sources disagree. A sentence that
    reports what the sources say ("The documents say the fee is $50.") stays a claim.

    With `language` "en" only the English phrases are looked for (they cost about as much
    again as the others); with any other or None, those of every language docs/languages.md
    lists.
    """
    low = text.lower()
    if any(cue in low for cue in _ABOUT_SOURCES_CUES) and _ABOUT_SOURCES.search(text):
        return True
    return language != "en" and _ABOUT_SOURCES_ELSEWHERE.search(text) is not None
