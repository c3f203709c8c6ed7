"""Actors and the characters they play: which of a cast line's two names a question asks for.

Film and television pages pair each actor with a character: "Geena Davis as Thelma", "her
husband Bob (Bill Pullman)", "Ted Mosby … portrayed by Josh Radnor", "Radnor plays Ted".
Both names are PERSON candidates of one sentence, so the entity type cannot tell them apart;
the question's wording can. "Who played X?" and "what actor …" ask for the actor; "who does
X play?" and "what character …" for the character.

A question may name the actor only through another part: "who does the actor of Barney
Stinson play in Batman: Under the Red Hood?". One page's cast line gives the actor ("Barney
Stinson (Neil Patrick Harris)"), the other page's the answer ("Neil Patrick Harris as
Nightwing / Dick Grayson"): `recast` finds the character that actor plays on another page.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from app.eval.metrics import normalize_answer
from app.reader.context import Evidence
from app.reader.lexicon import PLAY_VERBS
from app.reader.question import QuestionAnalysis, argument_slot

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


Role = Literal["actor", "character"]

_ASKED_BY_HEAD: dict[str, Role] = {
    **dict.fromkeys(("actor", "actress", "performer", "cast"), "actor"),
    **dict.fromkeys(("character", "role"), "character"),
}
# "plays for Ajax", "played with Device", "play their home games": sport and music, not a part
_NOT_A_PART = re.compile(r"\bplay(?:s|ed|ing)?\s+(?:for|with|their|its|home)\b", re.IGNORECASE)
# "who does the actor of Barney play?": the small parser misses the fronted object
_WHO_DOES_PLAY = re.compile(
    r"\bwhom?\s+(?:does|did|do|will|would)\b[^?]*\b(?:play|portray)\b", re.I
)
_OPEN, _CLOSE = "(", ")"


def asked_role(question: QuestionAnalysis) -> Role | None:
    """The side of a cast line the question asks for, None when it asks about neither."""
    if question.head in _ASKED_BY_HEAD:
        return _ASKED_BY_HEAD[question.head]
    if _NOT_A_PART.search(question.text):
        return None
    if _WHO_DOES_PLAY.search(question.text):
        return "character"
    if question.slot is not None and question.slot[1] & PLAY_VERBS:
        return "actor" if question.slot[0] == "subj" else "character"
    return None


def _name(token: Token) -> bool:
    return token.pos_ == "PROPN" or token.ent_type_ == "PERSON"


def _person_in_parentheses(doc: Doc, at: int) -> bool:
    """A person's name fills the parentheses opened just before token `at`: "(Bill Pullman)",
    not "(Hangul: …)" or "(born 1986)"."""
    ent = next((e for e in doc.ents if e.start == at), None)
    return (
        ent is not None
        and ent.label_ == "PERSON"
        and ent.end < len(doc)
        and doc[ent.end].text == _CLOSE
    )


def cast_role(doc: Doc, start: int, end: int) -> Role | None:
    """The side of a cast line doc[start:end] stands on, or None when it is on none."""
    if end <= start:
        return None
    before = doc[start - 1] if start > 0 else None
    after = doc[end] if end < len(doc) else None
    if after is not None and after.lower_ == "as" and end + 1 < len(doc) and _name(doc[end + 1]):
        return "actor"  # "Geena Davis as Thelma"
    if before is not None and before.lower_ == "as" and start >= 2 and _name(doc[start - 2]):
        return "character"
    if after is not None and after.text == _OPEN and _person_in_parentheses(doc, end + 1):
        return "character"  # "Bob (Bill Pullman)"
    if before is not None and before.text == _OPEN and _person_in_parentheses(doc, start):
        return "actor" if start >= 2 and _name(doc[start - 2]) else None
    found = argument_slot(doc[start:end].root)
    if found is not None and found[1] & PLAY_VERBS:  # "portrayed by Josh Radnor"
        return "actor" if found[0] == "subj" else "character"
    return None


def role_match(asked: Role | None, doc: Doc, start: int, end: int) -> float:
    """1 when the span stands on the asked side of a cast line, -1 on the other, else 0."""
    if asked is None:
        return 0.0
    said = cast_role(doc, start, end)
    return 0.0 if said is None else (1.0 if said == asked else -1.0)


_PARTICLE = r"(?:al|bin|da|de|del|der|di|du|ibn|la|le|van|von)"
_WORD = r"[A-Z][\w.'’\-]*"
_NAME = rf"{_WORD}(?:\s+(?:{_PARTICLE}\s+)?{_WORD})*"
_PART = rf"(?:the\s+)?{_NAME}(?:\s*/\s*(?:the\s+)?{_NAME})*"
_ACTOR_AS = re.compile(rf"(?P<actor>{_NAME})\s+as\s+(?P<part>{_PART})")
_PART_ACTOR = re.compile(rf"(?P<part>{_NAME})\s+\((?P<actor>{_NAME})\)")


@lru_cache(maxsize=4096)
def cast_pairs(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A sentence's cast lines as (actor, the part's names): "Neil Patrick Harris as
    Nightwing / Dick Grayson" → ("neil patrick harris", ("nightwing", "dick grayson")).
    Cached: every candidate of a sentence asks."""
    pairs = []
    for pattern in (_ACTOR_AS, _PART_ACTOR):
        for m in pattern.finditer(text):
            names = (normalize_answer(n) for n in m.group("part").split("/"))
            pairs.append((normalize_answer(m.group("actor")), tuple(n for n in names if n)))
    return tuple(pairs)


def actors_of_named_parts(question: str, evidence: list[Evidence]) -> dict[str, str]:
    """The actors of the parts the question names but whose actor it does not ("the actor
    of Barney Stinson"), each with the page that says so."""
    words = set(normalize_answer(question).split())
    found: dict[str, str] = {}
    for sentence in evidence:
        for actor, names in cast_pairs(sentence.text):
            if set(actor.split()) <= words:
                continue
            if any(set(name.split()) <= words for name in names):
                found.setdefault(actor, sentence.title)
    return found


def recast(actors: dict[str, str], sentence: Evidence, candidate: str) -> float:
    """1 when the candidate is the part one of `actors` plays in this sentence, on a page
    other than the one that named the actor."""
    if not actors:
        return 0.0
    words = set(normalize_answer(candidate).split())
    if not words:
        return 0.0
    for actor, names in cast_pairs(sentence.text):
        page = actors.get(actor)
        if page is None or page == sentence.title:
            continue
        if any(words <= set(n.split()) or set(n.split()) <= words for n in names):
            return 1.0
    return 0.0
