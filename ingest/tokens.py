"""Valid tokens for the token graph, BM25 and query seeding (TIGRAG's token validity).

A token is a lower-cased run of letters and digits. It is valid when it is at least
`min_length` characters long and not a stopword; so years and large numbers ("1950",
"20000") stay, punctuation and short tokens ("of", "11", "s" from "'s") go. One analyzer is
used everywhere, so a query token and a stored token always meet.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

from ingest.config import TokenConfig

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@cache
def english_stop_words() -> frozenset[str]:
    """spaCy's English stop words, read from spaCy's own list without importing spaCy: its
    import pulls in thinc and torch, seconds for a word list that every query and CLI
    command needs."""
    spec = importlib.util.find_spec("spacy")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("spacy is not installed")
    path = Path(spec.origin).parent / "lang" / "en" / "stop_words.py"
    words = importlib.util.spec_from_file_location("_spacy_en_stop_words", path)
    assert words is not None and words.loader is not None
    module = importlib.util.module_from_spec(words)
    words.loader.exec_module(module)
    return frozenset(module.STOP_WORDS)


@cache
def stopwords() -> frozenset[str]:
    return frozenset(w.casefold() for w in english_stop_words())


class Analyzer:
    """Turns text into its valid-token sequence. Cheap to build; keep one per config."""

    def __init__(self, cfg: TokenConfig | None = None) -> None:
        self.cfg = cfg or TokenConfig()
        self._stop = stopwords()

    def tokens(self, text: str) -> list[str]:
        min_len, stop = self.cfg.min_length, self._stop
        return [t for t in _WORD.findall(text.casefold()) if len(t) >= min_len and t not in stop]

    def all_words(self, text: str) -> list[str]:
        """Every lower-cased word, valid or not (for title and phrase matching)."""
        return _WORD.findall(text.casefold())
