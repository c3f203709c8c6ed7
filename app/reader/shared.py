"""Span questions about what two named things have in common.

"What profession did Alan Crosland and Kurt Voss both hold?", "What kind of musician does
Robert Plant and John Bonham have in common?": the answer is said on each thing's own
page, so a candidate only one of those pages names ("songwriter" for Plant alone) is not
it, however well it scores. When the question asks for something shared and names two
or more things that have passages, the candidates every such passage names go first,
each group keeping its score order. Nothing changes when no candidate is named by all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.eval.metrics import normalize_answer
from app.reader.context import Evidence
from app.reader.decide import passages_of
from app.reader.question import QuestionAnalysis
from app.reader.scoring import Scored

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
    return [s for s, c in pairs if c] + [s for s, c in pairs if not c]
