"""Valid tokens for the token graph, BM25 and query seeding (TIGRAG's token validity).

A token is a lower-cased run of letters and digits. It is valid when it is at least
`min_length` characters long and not a stopword; so years and large numbers ("1950",
"20000") stay, punctuation and short tokens ("of", "11", "s" from "'s") go. One analyzer is
used everywhere, so a query token and a stored token always meet.
"""

from __future__ import annotations

import re
from functools import cache

from spacy.lang.en.stop_words import STOP_WORDS

from ingest.config import TokenConfig

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@cache
def stopwords() -> frozenset[str]:
    return frozenset(w.casefold() for w in STOP_WORDS)


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
