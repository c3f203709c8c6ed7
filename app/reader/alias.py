"""Nicknames: the name a page says something is known by, when that is what is asked.

"What is the nickname of …?" and "what is the club commonly referred to as?" ask for
another name of something the question describes, and pages say it in a set way: "Brian
Bosworth, nicknamed "The Boz", …", "Tottenham Hotspur Football Club, commonly referred to
simply as Tottenham or Spurs, …". Nothing about the name's type tells it from the other
names of the sentence; the words that introduce it do. The other way round, a person asked
for is named by the name, not by the nickname the page gives ("McLaren MP4/11 was driven by
what Finnish driver?": "Mika Häkkinen", not "the Flying Finn").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc


_ASKED = re.compile(
    r"\bnick ?names?\b|\bmonikers?\b|\b(?:referred to|known|called|dubbed)(?: as)?\s*\?\s*$",
    re.IGNORECASE,
)
_NAMING = frozenset({"nicknamed", "nickname", "nicknames", "dubbed", "moniker", "called"})
_AS_NAMING = frozenset({"known", "referred", "called", "dubbed", "nicknamed"})
ALIAS_WINDOW = 6  # tokens from the introducing word to the name ("… as Tottenham ( ) or Spurs")


def asks_alias(question: str) -> bool:
    return _ASKED.search(question) is not None


def introduced_as_alias(doc: Doc, start: int) -> bool:
    """Whether the words just before doc[start] introduce it as another name: "nicknamed",
    "known as", "referred to (simply) as", … within `ALIAS_WINDOW` tokens and no verb
    between them."""
    for i in range(start - 1, max(start - 1 - ALIAS_WINDOW, -1), -1):
        t = doc[i]
        low = t.lower_
        if low in _NAMING:
            return True
        if low == "as" and any(p.lower_ in _AS_NAMING for p in doc[max(i - 3, 0) : i]):
            return True
        if t.pos_ in ("VERB", "AUX") or t.text in (".", ";"):
            return False
    return False


def alias_match(asked: bool, person: bool, doc: Doc, start: int, end: int) -> float:
    """1 when an alias is asked for and the span is introduced as one; -1 when a person is
    asked for and the span is a nickname nobody asked for; else 0."""
    if not (asked or person) or end <= start or not introduced_as_alias(doc, start):
        return 0.0
    return 1.0 if asked else -1.0
