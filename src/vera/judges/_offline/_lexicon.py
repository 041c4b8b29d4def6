"""Word lists the offline judge reads: negations, antonyms, numbers, units, conditions.

Everything here is plain data, lowercased, built once at import time. The stopwords and
abbreviations live with the sentence segmenter, in `vera._text._lexicon`.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that are not stopwords but say nothing a context could confirm: meta talk about the
# source ("according to the context") and hedges. Treating them as non-content keeps
# "Based on the context, X." as well supported as "X.".
LIGHT_WORDS: frozenset[str] = _words(
    """
    according based context contexts provided mentioned stated indicated
    called named known
    actually basically generally typically usually overall specifically essentially
    however despite although though additionally furthermore moreover also
    noted notes described describes expressed expresses highlighted highlights mentioning
    noting describing highlighting expressing
    """
)

# Words that deny without a negation: "refused offers" says what "would not accept offers" says.
DENIALS: frozenset[str] = _words(
    """
    refuse refused refuses refusing fail failed fails failing lack lacked lacks lacking
    deny denied denies denying reject rejected rejects rejecting decline declined declines
    forget forgot forgets forgotten forgetting ignore ignored ignores ignoring avoid avoided
    avoids avoiding unable absent instead rather oblivious neglect neglected neglects
    without prevent prevented prevents stop stopped stops halt halted cease ceased
    impossible unwilling reluctant unlikely withheld withhold hardly barely
    """
)

# Conversational filler: a sentence whose only non-stopwords are these is not a claim.
CHATTER: frozenset[str] = _words(
    """
    sure certainly absolutely great good question questions hope helps help helpful happy glad
    thanks thank welcome okay ok hello hi hey yes yeah well let know feel free ask further
    else course note please answer answers below following summary hopefully
    """
)

# Words that restrict a statement to what they qualify: "includes email support only" says
# that phone support is not included.
EXCLUSIVE: frozenset[str] = _words("only solely exclusively")

# Words that open a condition or restriction: what the context lacks right beside one is an
# invented qualifier ("for premium members, returns are free").
CONDITIONS: frozenset[str] = _words("if for when unless only except")

NEGATIONS: frozenset[str] = _words(
    "not no never none nor neither cannot without nothing nobody nowhere"
)

MONTHS: frozenset[str] = _words(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    """
)

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
NUMBER_WORDS: dict[str, int] = _UNITS

# "one" is usually a pronoun ("one of the largest"); it only counts as a number before a unit.
NUMBER_WORDS_NEEDING_UNIT: frozenset[str] = frozenset({"one"})

SCALE_WORDS: dict[str, float] = {
    "hundred": 1e2,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "bn": 1e9,
    "k": 1e3,
}

PERCENT_WORDS: frozenset[str] = frozenset({"percent", "pct", "percentage"})

CURRENCY_WORDS: dict[str, str] = {
    "dollar": "$",
    "dollars": "$",
    "usd": "$",
    "euro": "€",
    "euros": "€",
    "eur": "€",
    "pound": "£",
    "pounds": "£",
    "gbp": "£",
}

# Units a number may name one word later ("30 calendar days"); the stemmed form is compared.
UNIT_WORDS: frozenset[str] = _words(
    """
    second seconds minute minutes hour hours day days week weeks month months year years
    decade decades century centuries ms millisecond milliseconds
    mile miles km kilometre kilometres kilometer kilometers meter meters metre metres
    kg kilogram kilograms gram grams pound pounds lb lbs ton tons tonne tonnes
    gb mb tb kb byte bytes user users employee employees people person customer customers
    time times item items page pages point points
    """
)

# Pairs whose swap reverses a statement. Both directions are checked.
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("increase", "decrease"),
    ("increase", "reduce"),
    ("rise", "fall"),
    ("gain", "loss"),
    ("before", "after"),
    ("more", "less"),
    ("more", "fewer"),
    ("higher", "lower"),
    ("high", "low"),
    ("larger", "smaller"),
    ("large", "small"),
    ("greater", "smaller"),
    ("above", "below"),
    ("allowed", "prohibited"),
    ("allowed", "forbidden"),
    ("permitted", "forbidden"),
    ("permitted", "prohibited"),
    ("include", "exclude"),
    ("accept", "reject"),
    ("approve", "reject"),
    ("maximum", "minimum"),
    ("earliest", "latest"),
    ("first", "last"),
    ("open", "closed"),
    ("true", "false"),
    ("success", "failure"),
    ("succeed", "fail"),
    ("win", "lose"),
    ("enable", "disable"),
    ("mandatory", "optional"),
    ("required", "optional"),
    ("most", "least"),
    ("better", "worse"),
    ("best", "worst"),
    ("faster", "slower"),
    ("early", "late"),
    ("earlier", "later"),
    ("start", "end"),
    ("inside", "outside"),
    ("public", "private"),
    ("internal", "external"),
    ("legal", "illegal"),
    ("valid", "invalid"),
    ("possible", "impossible"),
    ("safe", "unsafe"),
    ("free", "paid"),
)

# A clause after ", and"/", but" counts as independent when it opens with one of these
# (or a capitalised word) and has a verb-like word soon after.
SUBJECT_STARTERS: frozenset[str] = _words(
    """
    i we you he she it they this that these those there the a an its their his her our my your
    each every all some most many both no none one
    """
)

VERB_HINTS: frozenset[str] = _words(
    """
    is are was were be been am has have had will would shall should can could may might must
    does do did cannot won't can't isn't aren't wasn't weren't doesn't don't didn't hasn't
    haven't hadn't wouldn't shouldn't couldn't remains became becomes become offers requires
    """
)
