"""Document titles as word sequences: how a text names a document.

Ingest matches titles in chunk text (CITES edges) and queries match them in questions
(title linking). Both split text the same way, here. The folded key of a title is also
stored on its document on a server backend, so a question's title links are found there by
an index lookup of the question's phrases rather than a table of every title in the
process (database serving: app/database_engine.py).
"""

from __future__ import annotations

import re

_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)

LONGEST_FOLDED_TITLE = 16  # words: a longer title is not looked up in a question


def title_words(text: str) -> list[str]:
    """Words with a possessive 's removed, so "Palme's husband" names "Lisbeth Palme"."""
    return [w[:-2] if w.endswith(("'s", "’s")) else w for w in _WORDS.findall(text)]


def title_key(title: str) -> tuple[str, ...]:
    """A title as a case-sensitive word sequence, without a trailing "(disambiguation)"."""
    return tuple(title_words(_PAREN.sub("", title)))


def folded_title_key(title: str) -> str:
    """The case-folded key a question can name the title by, as one string ('' for none)."""
    return " ".join(w.casefold() for w in title_key(title))


def folded_phrases(text: str, longest: int = LONGEST_FOLDED_TITLE) -> list[str]:
    """Every run of up to `longest` consecutive words of `text`, case-folded and joined as
    `folded_title_key` joins a title's: the keys of every title the text could name."""
    words = title_words(text.casefold())
    return list(
        dict.fromkeys(
            " ".join(words[i : i + n])
            for i in range(len(words))
            for n in range(1, min(longest, len(words) - i) + 1)
        )
    )
