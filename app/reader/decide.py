"""Questions whose answer is not a span to find: "A or B?" and yes/no.

A choice question names its answers; the reader only picks one. When the wording orders
the options ("born first", "more species", "lived longer", "taller"), each option's passage gives a
date, a lifespan, a count or a height and the comparison decides; otherwise the option whose
evidence best covers the rest of the question wins. A yes/no question about two things
("Are A and B both …?", "… the same country?") is answered by checking the predicate, or
the shared attribute, in each thing's own passage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.eval.metrics import normalize_answer
from app.reader.context import Evidence, clean_title
from app.reader.lexicon import STOP
from app.reader.life import said_event
from app.reader.question import QuestionAnalysis
from app.reader.related import measured_passage
from app.reader.scoring import content_words

if TYPE_CHECKING:
    from spacy.tokens import Doc


Parse = Callable[[Sequence[str]], "list[Doc]"]

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), start=1)}
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_UNITS = {"m": 1.0, "metres": 1.0, "meters": 1.0, "km": 1000.0, "ft": 0.3048, "feet": 0.3048}
_LENGTH = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(" + "|".join(_UNITS) + r")\b", re.IGNORECASE)
_DIGIT_WORDS = "zero one two three four five six seven eight nine ten"
_NUMBER_WORDS = {w: i for i, w in enumerate(_DIGIT_WORDS.split())}
_SCALE = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9}
# The attribute a "same …" question compares, by the entity types that express it.
_SAME_LABELS = {
    "country": ("GPE", "NORP"),
    "nationality": ("NORP", "GPE"),
    "city": ("GPE",),
    "state": ("GPE",),
    "continent": ("LOC",),
    "company": ("ORG",),
    "studio": ("ORG",),
    "label": ("ORG",),
    "team": ("ORG",),
    "network": ("ORG",),
    "university": ("ORG",),
    "year": ("DATE",),
}
COVERAGE_HOW = "coverage"  # a choice decided by which option's passages cover the question
BOTH_THRESHOLD = 0.5  # share of the predicate's words a passage must contain for "yes"


@dataclass(slots=True)
class Decision:
    answer: str
    evidence: list[Evidence]
    how: str  # which rule decided, for the trace
    # a yes/no compared passages the question itself names (not stand-ins for them)
    named: bool = True


def passages_of(name: str, evidence: Sequence[Evidence]) -> list[Evidence]:
    """Sentences of the passages titled like `name`, else the sentences naming it."""
    key = normalize_answer(name)
    if not key:
        return []
    titled = [
        e
        for e in evidence
        if (t := normalize_answer(e.title))
        and (key == t or f" {key} " in f" {t} " or f" {t} " in f" {key} ")
    ]
    if titled:
        return sorted(titled, key=lambda e: (e.passage, e.position))
    return [e for e in evidence if f" {key} " in f" {normalize_answer(e.text)} "]


def choose(
    question: QuestionAnalysis, evidence: Sequence[Evidence], parse: Parse
) -> Decision | None:
    """One of `question.options` (`as_named`), or None when no option has any evidence."""
    titles = {normalize_answer(clean_title(e.title)) for e in evidence} - {""}
    question = replace(
        question, options=[as_named(o, question.text, titles) for o in question.options]
    )
    found = {o: passages_of(o, evidence) for o in question.options}
    if not any(found.values()):
        return None
    if question.order and question.measure and all(found.values()):
        measured = {o: measured_passage(question, o, found[o], evidence, parse) for o in found}
        if any(measured[o] is found[o] for o in found):  # like with like, or not at all
            measured = found
        values = {o: _value(question, measured[o], parse) for o in question.options}
        if all(v is not None for _, v in values.values()):
            pick = (min if question.order in ("earlier", "smaller") else max)(
                question.options,
                key=lambda o: values[o][1],  # type: ignore[arg-type,return-value]
            )
            if len({v for _, v in values.values()}) > 1:
                return Decision(pick, [values[pick][0]], f"{question.order} {question.measure}")
    rest = question.content - {w for o in question.options for w in normalize_answer(o).split()}
    best, best_key, best_evidence = question.options[0], (-1.0, 0.0), None
    for option in question.options:
        for e in found[option]:
            words = set(normalize_answer(f"{e.title} {e.text}").split())
            key = (len(rest & words) / max(len(rest), 1), e.relevance)
            if key > best_key:
                best, best_key, best_evidence = option, key, e
    return Decision(best, [best_evidence] if best_evidence else [], COVERAGE_HOW)


_BEFORE = re.compile(r"(?:^|[,:;?]\s*)([^,:;?]+?)([,:])\s+$")


def as_named(option: str, question: str, titles: set[str]) -> str:
    """The option as the evidence names it. The question's reading cuts options at commas
    and colons, and a title may hold either ("Sir Thomas Wheate, 1St Baronet", "A Better
    Tomorrow Iii: Love & Death In Saigon"): the piece before a comma or colon is put back
    when, with it, the option is a retrieved page's title."""
    at = question.find(option)
    if at < 0:
        return option
    before = _BEFORE.search(question[:at])
    if before is not None:
        wider = f"{before.group(1).strip()}{before.group(2)} {option}"
        if normalize_answer(wider) in titles:
            return wider
    return option


def _value(
    question: QuestionAnalysis, sentences: list[Evidence], parse: Parse
) -> tuple[Evidence | None, float | tuple[int, int, int] | None]:
    """The date, lifespan or count an option's passage gives, with its sentence."""
    docs = parse([e.text for e in sentences])
    if question.measure == "date":
        dated = [
            (e, doc, ent, date)
            for e, doc in zip(sentences, docs, strict=True)
            for ent in doc.ents
            if ent.label_ == "DATE" and (date := _date(ent.text))
        ]
        # "died first": the date said of the death, when the passage says which it is
        said = [d for d in dated if said_event(d[1], d[2].start, d[2].end) == question.event]
        for e, _, _, date in said if question.event and said else dated:
            return e, date
    elif question.measure == "lifespan":
        for e in sentences:
            years = [int(y) for y in _YEAR.findall(e.text)]
            if len(years) >= 2 and 0 < years[1] - years[0] < 130:
                return e, float(years[1] - years[0])
    else:
        rest = question.content - {w for o in question.options for w in o.lower().split()}
        ranked = sorted(
            zip(sentences, docs, strict=True),
            key=lambda pair: -len(rest & content_words(pair[1])),
        )
        if question.measure == "height":
            for e, _ in ranked:
                if (metres := _length(e.text)) is not None:
                    return e, metres
        for e, doc in ranked:
            for ent in doc.ents:
                if ent.label_ in ("CARDINAL", "QUANTITY", "MONEY", "PERCENT"):
                    number = _number(ent.text)
                    if number is not None:
                        return e, number
    return None, None


def _length(text: str) -> float | None:
    """The first length the text gives, in metres ("8,051 m", "26,414 ft")."""
    match = _LENGTH.search(text)
    if match is None:
        return None
    value = float(match.group(1).replace(",", ""))
    return value * _UNITS[match.group(2).lower()]


def _date(text: str) -> tuple[int, int, int] | None:
    year = _YEAR.search(text)
    if year is None:
        return None
    lowered = text.lower()
    month = next((n for m, n in _MONTHS.items() if m in lowered), 0)
    day_match = re.search(r"\b([0-3]?\d)\b", _YEAR.sub(" ", text))
    day = int(day_match.group(1)) if day_match and month else 0
    return int(year.group(0)), month, day


def names_number(text: str) -> bool:
    """Whether the text gives a number, in digits or in words ("seven members")."""
    return _number(text) is not None


def _number(text: str) -> float | None:
    lowered = text.lower().replace("about", "").strip()
    match = _NUMBER.search(lowered)
    value: float | None = None
    if match:
        value = float(match.group(0).replace(",", ""))
    else:
        value = next((float(n) for w, n in _NUMBER_WORDS.items() if w in lowered.split()), None)
    if value is None:
        return None
    for word, scale in _SCALE.items():
        if word in lowered:
            value *= scale
    return value


def yes_or_no(
    question: QuestionAnalysis, evidence: Sequence[Evidence], parse: Parse
) -> Decision | None:
    """ "yes" or "no" for a question about two or more named things, None when fewer than
    two of them have evidence."""
    lowered = f" {normalize_answer(question.text)} "
    titles = list(dict.fromkeys(e.title for e in evidence if e.title))
    named = [t for t in titles if f" {normalize_answer(t)} " in lowered]
    things = {t: passages_of(t, evidence) for t in named}
    things = {t: s for t, s in things.items() if s}
    asked = len(things) >= 2  # else passages the question does not name stand in
    for title in titles:  # fewer than two named: the best-ranked passages stand in
        if len(things) >= 2:
            break
        things.setdefault(title, passages_of(title, evidence))
    if len(things) < 2:
        return None
    name_words = {w for t in things for w in normalize_answer(t).split()}
    same = re.search(r"\bsame (\w+)", question.text.lower())
    if same:
        labels = _SAME_LABELS.get(same.group(1).rstrip("s"))
        if labels:
            values = []
            for sentences in things.values():
                docs = parse([e.text for e in sentences[:3]])
                values.append(
                    {normalize_answer(x.text) for d in docs for x in d.ents if x.label_ in labels}
                    - name_words
                )
            shared = set.intersection(*values) if all(values) else set()
            used = [s[0] for s in things.values()]
            return Decision("yes" if shared else "no", used, f"same {same.group(1)}", asked)
    predicate = question.content - name_words - STOP - {"both", "same", "also"}
    if not predicate:
        return None
    shares = []
    for sentences in things.values():
        words = set()
        for doc in parse([e.text for e in sentences]):
            words |= content_words(doc)
        shares.append(len(predicate & words) / len(predicate))
    used = [s[0] for s in things.values()]
    answer = "yes" if min(shares) >= BOTH_THRESHOLD else "no"
    return Decision(answer, used, "predicate in each passage", asked)
