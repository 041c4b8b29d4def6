"""The word lists sentence segmentation needs: stopwords and abbreviations.

Plain data, lowercased, built once at import time. They live in the text layer because the
segmenter does; the offline judge's own lists (`vera.judges._offline._lexicon`) re-export them.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words. Comparison and order words (more/less, before/after, first/last, most) are
# deliberately left out: they carry meaning and feed the antonym check.
STOPWORDS: frozenset[str] = _words(
    """
    a an the and or but if then else so than that this these those there here
    i me my mine we us our ours you your yours he him his she her hers it its they them their
    theirs one ones someone something anyone anything everyone everything
    is am are was were be been being do does did doing done have has had having
    will would shall should can could may might must ought
    of in on at by for with from to into onto upon about as over under
    up down out off through during per via within across along among around toward towards
    what which who whom whose when where why how
    all any both each either every few many much some such own same other another
    only just also too very quite rather really even still yet again ever
    s t d ll m re ve y o
    not no never none nor neither cannot without nothing nobody nowhere
    it's that's there's here's let's what's who's
    """
)

# Abbreviations after which a full stop never ends a sentence: titles and Latin shorthands
# that always lead into more text, in English and the offline judge's other languages.
NEVER_FINAL_ABBREVIATIONS: frozenset[str] = _words(
    """
    mr mrs ms dr prof rev hon gen col capt lt sgt mt ft
    e.g i.e eg ie vs v cf viz approx incl esp ca
    bzw z.b d.h vgl evtl ggf inkl zzgl nr dipl
    p.ex mme mlle sra srta dra aprox núm bijv d.w.z dott sig
    """
)

# Abbreviations that can also close a sentence ("... based in the U.S. It was ..."): the
# segmenter splits after them only when the next word is a capitalised function word.
ABBREVIATIONS: frozenset[str] = _words(
    """
    etc inc ltd co corp llc plc bros st ave rd blvd jr sr no nos fig figs vol vols pp p para
    sec ch art dept est al min max avg
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    u.s u.k u.n u.s.a e.u a.m p.m ph.d b.a m.a b.sc m.sc d.c n.y l.a
    usw etc.pp ecc enz
    """
)
