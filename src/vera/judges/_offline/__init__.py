"""The offline judge: VERA's default, embedded, dependency-free judge."""

from vera._text._abstention import abstains, is_about_sources
from vera._text._segment import split_units
from vera.judges._offline._claims import extract_claims
from vera.judges._offline._features import FEATURES, SampleFacts, claim_features
from vera.judges._offline._index import LONG_TEXT, Postings
from vera.judges._offline._judge import OfflineJudge
from vera.judges._offline._languages import SUPPORTED
from vera.judges._offline._lexical_support import (
    LEXICAL_WEIGHTS,
    RULED_OUT,
    LexicalWeights,
    lexical_support,
    rules_out,
)
from vera.judges._offline._model import SupportModel, load_model, shipped_path
from vera.judges._offline._passages import GAP, LONG, evidence_for, passages
from vera.judges._offline._sample_language import UnsupportedLanguageError
from vera.judges._offline._tokens import analyse, analyse_text, stem
from vera.judges._offline._verify import CLOSEST, Settings, verify

__all__ = [
    "CLOSEST",
    "FEATURES",
    "GAP",
    "LEXICAL_WEIGHTS",
    "LONG",
    "LONG_TEXT",
    "RULED_OUT",
    "SUPPORTED",
    "LexicalWeights",
    "OfflineJudge",
    "Postings",
    "SampleFacts",
    "Settings",
    "SupportModel",
    "UnsupportedLanguageError",
    "abstains",
    "analyse",
    "analyse_text",
    "claim_features",
    "evidence_for",
    "extract_claims",
    "is_about_sources",
    "lexical_support",
    "load_model",
    "passages",
    "rules_out",
    "shipped_path",
    "split_units",
    "stem",
    "verify",
]
