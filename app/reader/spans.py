"""Candidate answer spans of one parsed evidence sentence.

Answers to factoid questions are named entities (spaCy NER), years inside longer dates
("what year" is answered by "1952", not "September 12, 1952"), proper-noun runs NER missed,
and plain noun phrases for class questions ("film director", "documentary film"). Noun
phrases are trimmed of determiners, possessives and nationality adjectives ("an American
film director" → "film director"); the nationality stays a candidate of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.reader.code import code_spans

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token


MAX_WORDS = 10
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_TRIM_ENTITY_TYPES = frozenset({"NORP", "ORDINAL", "CARDINAL", "DATE"})
_TRIM_DEPS = frozenset({"det", "poss", "predet", "case", "punct", "nummod", "advmod"})


@dataclass(frozen=True, slots=True)
class Candidate:
    text: str
    # a spaCy entity label, "YEAR" (the year of a longer date), "PROPN" (a proper noun
    # no entity covers), "NOUN" (a plain noun phrase), "CODE" or "VERSION" (`code`)
    label: str
    start: int  # token offsets in the sentence's Doc
    end: int


def candidates(doc: Doc, question_words: frozenset[str] = frozenset()) -> list[Candidate]:
    """Every candidate span of `doc`, each (text, label, offsets) once. A span that starts
    or ends with words of the question also comes without them ("Hells Angel Alan
    Passaro" → "Alan Passaro" when the question says "Hells Angel")."""
    found: dict[tuple[str, int, int], Candidate] = {}

    def add(text: str, label: str, start: int, end: int) -> None:
        _add(text, label, start, end)
        lo, hi = start, end
        while lo < hi and _asked(doc[lo], question_words):
            lo += 1
        while hi > lo and _asked(doc[hi - 1], question_words):
            hi -= 1
        if (lo, hi) != (start, end) and hi > lo and label != "YEAR":
            _add(doc[lo:hi].text, label, lo, hi)

    def _add(text: str, label: str, start: int, end: int) -> None:
        text = _POSSESSIVE.sub("", text.strip(" ,;:.\"'()[]")).strip(" ,;:.\"'()[]")
        if not text or len(text.split()) > MAX_WORDS or not any(c.isalnum() for c in text):
            return
        if len(text) == 1 and not text.isdigit():  # "s" of a possessive the tagger split off
            return
        found.setdefault((text, start, end), Candidate(text, label, start, end))

    covered: set[int] = set()
    for ent in doc.ents:
        if ent.label_ in ("DATE", "TIME") and _relative(ent):
            continue
        add(ent.text, ent.label_, ent.start, ent.end)
        covered.update(range(ent.start, ent.end))
        if ent.label_ == "DATE":
            for m in _YEAR.finditer(ent.text):
                if m.group(0) != ent.text.strip():
                    add(m.group(0), "YEAR", ent.start, ent.end)
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ == "PRON":
            continue
        for run in _proper_runs(chunk, covered):
            add(run.text, "PROPN", run.start, run.end)
        core = _trimmed(chunk)
        if core is not None and not all(t.i in covered for t in core):
            add(core.text, "NOUN", core.start, core.end)
            head = _compound_head(core)
            if head is not None and head.text != core.text:
                add(head.text, "NOUN", head.start, head.end)
    for text, label, start, end in code_spans(doc):  # said exactly as written
        if len(text.split()) <= MAX_WORDS:
            found.setdefault((text, start, end), Candidate(text, label, start, end))
    return list(found.values())


_RELATIVE = frozenset({"following", "previous", "next", "same", "that", "this", "last", "later"})


def _relative(ent: Span) -> bool:
    """A date told relative to another ("the following year", "that day"): it names no
    date by itself."""
    return not any(t.like_num for t in ent) and any(t.lower_ in _RELATIVE for t in ent)


def _asked(token: Token, question_words: frozenset[str]) -> bool:
    return token.is_punct or bool({token.lower_, token.lemma_.lower()} & question_words)


def _proper_runs(chunk: Span, covered: set[int]) -> list[Span]:
    """Maximal runs of proper nouns in `chunk` that no entity covers."""
    runs: list[Span] = []
    start: int | None = None
    for t in chunk:
        # the tagger calls some lowercase words proper nouns ("its glacier"): a name
        # is written capitalised
        proper = t.pos_ == "PROPN" and t.i not in covered and (t.text[:1].isupper() or t.is_digit)
        if proper and start is None:
            start = t.i
        elif not proper and start is not None:
            runs.append(chunk.doc[start : t.i])
            start = None
    if start is not None:
        runs.append(chunk.doc[start : chunk.end])
    return runs


def _trimmed(chunk: Span) -> Span | None:
    """The noun phrase without leading determiners, possessives, numbers and nationality
    adjectives."""
    start = chunk.start
    while start < chunk.end - 1:
        t = chunk.doc[start]
        # "an American film director": the nationality (or any entity adjective) is not
        # part of the class the phrase names.
        leading = t.dep_ in _TRIM_DEPS or t.ent_type_ in _TRIM_ENTITY_TYPES
        if not (leading or (t.pos_ == "ADJ" and t.ent_type_)):
            break
        start += 1
    span = chunk.doc[start : chunk.end]
    return span if span.text.strip() else None


def _compound_head(span: Span) -> Span | None:
    """The head noun with its compounds ("rock band" in "famous rock band")."""
    root = span.root
    start = root.i
    while start - 1 >= span.start and span.doc[start - 1].dep_ == "compound":
        start -= 1
    return span.doc[start : root.i + 1] if start > span.start else None
