"""Comparisons made through a relation: "Which film has the director who was born first,
A or B?" compares the directors' birth dates, which the films' pages do not give; each
film's page names its director, whose own page does.

When a choice question's wording names a role (director, composer, author, …) and an
option's passage names someone who has a passage of their own in the evidence, that
person's passage is what the option is measured by.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from app.eval.metrics import normalize_answer
from app.reader.context import Evidence, clean_title
from app.reader.lexicon import NAMED
from app.reader.question import QuestionAnalysis

if TYPE_CHECKING:
    from spacy.tokens import Doc


Parse = Callable[[Sequence[str]], "list[Doc]"]

ROLE_WORDS = frozenset(
    {
        "director",
        "directed",
        "performer",
        "performed",
        "composer",
        "composed",
        "author",
        "writer",
        "wrote",
        "producer",
        "produced",
        "creator",
        "created",
        "founder",
        "founded",
        "singer",
    }
)


def titled(name: str, evidence: Sequence[Evidence]) -> list[Evidence]:
    """Sentences of the passages whose title is `name` (disambiguation aside)."""
    key = normalize_answer(name)
    found = [e for e in evidence if key and normalize_answer(clean_title(e.title)) == key]
    return sorted(found, key=lambda e: (e.passage, e.position))


def measured_passage(
    question: QuestionAnalysis,
    option: str,
    sentences: list[Evidence],
    evidence: Sequence[Evidence],
    parse: Parse,
) -> list[Evidence]:
    """The sentences `option` is measured by: the passage of the first name its passage
    gives that has a passage of its own (the director of "directed by …"), else its own."""
    if not question.content & ROLE_WORDS or not sentences:
        return sentences
    own = normalize_answer(option)
    for doc in parse([e.text for e in sentences]):
        for ent in doc.ents:
            # any name: the small NER model calls some people ORG; having a page decides
            if ent.label_ not in NAMED or normalize_answer(ent.text) == own:
                continue
            theirs = titled(ent.text, evidence)
            if theirs:
                return theirs
    return sentences
