"""The chosen span, completed from its sentence the way a person would say the answer.

Candidates are cut short on purpose (the question's own words are stripped, entities end
where the NER model ends them), so the best one can be a fragment of the answer:
- "What type of sprite …" read from "a water sprite": the candidate is "water", the
  answer "water sprite" — the asked-about noun right after a word that modifies it.
- "Where was X born?" read from "born in Bay Ridge, Brooklyn": "Bay Ridge" is a place
  and the place it lies in follows it; the answer names both, as the sentence does (not
  when the two are items of a list).
- "How many members …" read from "has seven members": the candidate is "seven", the
  answer "seven members", as a person says a count, with its qualifier ("over 600
  stores") when the sentence gives one.
- "Which regional district …" read from "the Metro Vancouver regional district": the name
  and the asked noun, with the adjectives between them, are what the sentence calls it.
- A name the NER model cut inside its own proper-noun run: "North Greenwich" of "the North
  Greenwich Arena", "Landing Place" of "Captain Cook's Landing Place", "Go" of "Teen Titans
  Go!" — the capitalised words that modify it, or that it modifies, belong to the name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.reader.question import COUNTING, QuestionAnalysis
from app.reader.spans import MAX_WORDS

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


_PLACES = frozenset({"GPE", "LOC"})
_MODIFIES = frozenset({"compound", "amod", "nmod"})
_COUNTS = frozenset({"CARDINAL", "QUANTITY", "MONEY"})
_QUALIFIERS = frozenset({"quantmod", "advmod", "amod"})
DESIGNATION_ADJECTIVES = 2  # adjectives between a name and the asked noun it takes


def completed(
    question: QuestionAnalysis, doc: Doc, start: int, end: int, label: str = "NOUN"
) -> tuple[int, int]:
    """The token span to answer with: (start, end), extended as the module says. A class
    (`label` NOUN) takes the asked-about noun; a name only with adjectives between them
    ("Metro Vancouver regional district"), not when it follows directly ("Silverrun", not
    "Silverrun river", for "which river")."""
    if end <= start or end > len(doc):
        return start, end
    if question.wh in COUNTING and label in _COUNTS:
        return _counted(question, doc, start, end)
    if label != "NOUN":
        start, end = _name_run(doc, start, end)
        if question.plural:
            start, end = _listed(doc, start, end)
    if end < len(doc) and question.head and label == "NOUN":
        nxt, last = doc[end], doc[end - 1]
        modified = nxt.pos_ == "NOUN" and last.head == nxt and last.dep_ in _MODIFIES
        # the asked noun itself, whatever the tagger made of it ("a water sprite", "sprite"
        # tagged an adjective)
        if nxt.lemma_.lower() == question.head and (modified or nxt.lower_ == question.head):
            return start, end + 1
    if label != "NOUN" and question.head:
        end = _designated(question.head, doc, end)
    if end + 1 < len(doc) and doc[end].text == "," and _places_asked(question):
        first = _entity_at(doc, start)
        second = next((e for e in doc.ents if e.start == end + 1), None)
        listed = second is not None and _in_list(doc, second.end)
        if first and second and {first.label_, second.label_} <= _PLACES and not listed:
            return start, second.end
    return start, end


def _designated(head: str, doc: Doc, end: int) -> int:
    """The end of a name's designation: the asked noun after the name, when adjectives stand
    between them ("the Metro Vancouver regional district" for "which regional district"),
    else `end`."""
    for k in range(end, min(end + DESIGNATION_ADJECTIVES + 1, len(doc))):
        t = doc[k]
        if t.lemma_.lower() == head and t.pos_ == "NOUN":
            return k + 1 if k > end else end
        if t.pos_ != "ADJ":
            break
    return end


def _counted(question: QuestionAnalysis, doc: Doc, start: int, end: int) -> tuple[int, int]:
    """The count with the noun it counts when that is the question's ("seven members"),
    and the words before it that qualify it ("over", "more than")."""
    counted = doc[end - 1].head
    if (
        doc[end - 1].dep_ != "nummod"
        or counted.i < end
        or counted.pos_ != "NOUN"
        or not {counted.lower_, counted.lemma_.lower()} & question.content
    ):
        return start, end
    while start > 0 and _qualifies(doc[start - 1], start, end):
        start -= 1
    return start, counted.i + 1


def _qualifies(token: Token, start: int, end: int) -> bool:
    """ "over" of "over 600", "more than" of "more than 25 million"; not "all" of "all 30"."""
    return token.dep_ in _QUALIFIERS and token.pos_ != "DET" and start <= token.head.i < end


def _listed(doc: Doc, start: int, end: int) -> tuple[int, int]:
    """The whole list of names the span is an item of ("the Detroit Lions and the Los
    Angeles Rams"), when it fits a short answer; else the span."""
    top = doc[start:end].root
    while top.dep_ == "conj" and top.head.i != top.i:
        top = top.head
    items = sorted([top, *top.conjuncts], key=lambda t: t.i)
    if len(items) < 2 or not all(t.pos_ == "PROPN" or t.ent_type_ for t in items[:-1]):
        return start, end
    first, last = _entity_at(doc, items[0].i), _entity_at(doc, items[-1].i)
    lo = min(first.start if first is not None else items[0].left_edge.i, start)
    hi = max(last.end if last is not None else items[-1].i + 1, end)
    return (lo, hi) if hi - lo <= MAX_WORDS + 4 else (start, end)


def _entity_at(doc: Doc, i: int) -> Span | None:
    """The named entity token `i` is part of, if any."""
    return next((e for e in doc.ents if e.start <= i < e.end), None)


def _name_run(doc: Doc, start: int, end: int) -> tuple[int, int]:
    """The span grown over the proper nouns of its run: rightwards while the last word is a
    compound of the next capitalised proper noun, leftwards over capitalised compounds and
    a possessive ("Captain Cook's") that modify a word of the span."""
    while (
        end < len(doc)
        and _proper(doc[end])
        and doc[end - 1].dep_ == "compound"
        and doc[end - 1].head.i >= end
    ):
        end += 1
    while start > 0:
        before = doc[start - 1]
        if _proper(before) and before.dep_ == "compound" and start <= before.head.i < end:
            start -= 1
        elif (
            start > 1
            and before.tag_ == "POS"
            and _proper(doc[start - 2])
            and doc[start - 2].dep_ == "poss"
            and start <= doc[start - 2].head.i < end
        ):
            start -= 2
        else:
            break
    return start, end


def _proper(token: Token) -> bool:
    return token.pos_ == "PROPN" and token.text[:1].isupper()


def _in_list(doc: Doc, at: int) -> bool:
    """The names from token `at` on continue a list: "Mohawk, Onondaga, Oneida, Cayuga and
    Seneca" names peers, not a place and the region it lies in; "St. Louis, Missouri, in
    …", "Bay Ridge, Brooklyn, and grew up" and "Bay Ridge, Brooklyn, New York" do not."""
    starts = {e.start: e.end for e in doc.ents}
    i = at
    while i + 1 < len(doc) and doc[i].text == "," and (i + 1) in starts:
        i = starts[i + 1]
    if i < len(doc) and doc[i].text == ",":
        i += 1
    return i + 1 < len(doc) and doc[i].lower_ in ("and", "or") and (i + 1) in starts


def _places_asked(question: QuestionAnalysis) -> bool:
    return max(question.labels.get(label, 0.0) for label in _PLACES) >= 1.0
