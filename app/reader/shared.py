"""Span questions about what two named things have in common.

"What profession did Alan Crosland and Kurt Voss both hold?", "What kind of musician does
Robert Plant and John Bonham have in common?": the answer is said on each thing's own
page, so a candidate only one of those pages names ("songwriter" for Plant alone) is not
it, however well it scores. When the question asks for something shared and names two
or more things that have passages, the candidates every such passage names go first,
each group keeping its score order. Nothing changes when no candidate is named by all.
A candidate named by all takes the words before it that every page says with it too:
"artist", read from "a retired Dutch mixed martial artist", is "mixed martial artist" when
the other page says "mixed martial artist" as well.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from app.eval.metrics import normalize_answer
from app.reader.context import Evidence
from app.reader.decide import passages_of
from app.reader.lexicon import STOP
from app.reader.question import QuestionAnalysis
from app.reader.scoring import Scored

WIDEN_WORDS = 3  # words a shared candidate may take from before it
_SHARED = re.compile(r"\b(both|in common|share|shared|common to)\b", re.IGNORECASE)


def shared_things(question: QuestionAnalysis, evidence: Sequence[Evidence]) -> list[str]:
    """The passage titles a shared-attribute question names (two or more), else []."""
    if question.kind != "span" or not _SHARED.search(question.text):
        return []
    asked = f" {normalize_answer(question.text)} "
    titles = dict.fromkeys(e.title for e in evidence if e.title)
    named = [t for t in titles if (k := normalize_answer(t)) and f" {k} " in asked]
    return named if len(named) >= 2 else []


def prefer_shared(
    question: QuestionAnalysis, evidence: Sequence[Evidence], scored: list[Scored]
) -> list[Scored]:
    """`scored` with the candidates named on every thing's page first (see module)."""
    things = shared_things(question, evidence)
    if not things:
        return scored
    pages = []
    for thing in things:
        sentences = passages_of(thing, evidence)
        pages.append(" " + " ".join(normalize_answer(e.text) for e in sentences) + " ")
    subjects = {normalize_answer(t) for t in things}

    def on_every_page(s: Scored) -> bool:
        key = normalize_answer(s.text)
        if not key or key in subjects:
            return False
        forms = {key, key.removesuffix("s"), f"{key}s"}
        return all(any(f" {f} " in page for f in forms) for page in pages)

    common = [on_every_page(s) for s in scored]
    if not any(common):
        return scored
    pairs = list(zip(scored, common, strict=True))
    first = [_widened(s, pages) for s, c in pairs if c]
    return first + [s for s, c in pairs if not c]


def _widened(scored: Scored, pages: list[str]) -> Scored:
    """The candidate with the words before it in its sentence that every page says with it
    too ("artist" → "mixed martial artist" when both pages say "mixed martial artist")."""
    words = scored.evidence.text.split()
    own = scored.text.split()
    n = len(own)
    at = next((i for i in range(len(words) - n + 1) if words[i : i + n] == own), None)
    if at is None:
        return scored
    start = at
    while start > 0 and at - start < WIDEN_WORDS:
        word = words[start - 1]
        if not word.isalpha() or word.lower() in STOP:
            break
        phrase = normalize_answer(" ".join(words[start - 1 : at + n]))
        if not all(f" {phrase} " in page for page in pages):
            break
        start -= 1
    if start == at:
        return scored
    return replace(scored, text=" ".join(words[start : at + n]), start=0, end=0)
