"""A chosen option said in full: "Which playwright lived longer, Edward Albee or J. M.
Barrie?" names Albee as the question does, while his page opens with the name he is known
by in full, "Edward Franklin Albee III (March 12, 1928 – …) was …". The answer gives both,
"Edward Albee (Edward Franklin Albee III)", so it is the name the asker used and the one
the sources use. Only a page's opening name that holds every word of the option (an
initial standing for a word: "Joseph L. Mankiewicz" in "Joseph Leo Mankiewicz") and says
more than it does counts.

An acronym is said in full the same way, from the evidence that spells it out: "NHL" read
from "the commissioner of the NHL" is answered "National Hockey League (NHL)" when a
sentence gives "the National Hockey League (NHL)", and "EABL" from "East African Breweries
Limited, commonly referred to as EABL" (`spelled_out`).

Asked for a middle name, the answer is the person the evidence points to, said by the middle
of the full name the person's page opens with: "Andreas (Peter Andreas Thiel)" (`middle_name`).

The reverse holds for a span answer: read from a page's opening sentence, it can be the
full name ("Sir Frank P. Lowy") of someone the sources title by the short one ("Frank
Lowy"); the answer then leads with the title (`titled`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.eval.metrics import normalize_answer
from app.reader.context import Evidence, clean_title
from app.reader.decide import passages_of

_OPENING = re.compile(r"^(?P<name>[^(),;]+?)\s*(?:\(|,| is | was | are | were )")
_PARTICLES = frozenset({"de", "da", "di", "du", "van", "von", "der", "den", "la", "le", "of", "y"})
MAX_NAME_WORDS = 7


def _words(text: str) -> list[str]:
    return [w for part in re.split(r"[\s\-‐–]+", text) if (w := normalize_answer(part))]


def _holds(full: list[str], short: list[str]) -> bool:
    """Every word of `short`, in order, in `full` (a one-letter word matches an initial)."""
    i = 0
    for word in full:
        if i < len(short) and (word == short[i] or (len(short[i]) == 1 and word[0] == short[i])):
            i += 1
    return i == len(short)


def opening_name(sentence: str) -> str | None:
    """The name a page's first sentence opens with, if it reads as a name."""
    m = _OPENING.match(sentence.strip())
    if not m:
        return None
    name = m.group("name").strip()
    words = name.split()
    if not 2 <= len(words) <= MAX_NAME_WORDS:
        return None
    if not all(w.strip("\"“”'")[:1].isupper() or w.lower() in _PARTICLES for w in words):
        return None
    return name


def full_name(option: str, pages: Sequence[Evidence]) -> str | None:
    """The fuller name the option's page opens with, or None (`pages`: the sentences of the
    passages about the option, as `decide.passages_of` finds them)."""
    short = _words(option)
    if not short:
        return None
    for e in pages:
        if e.position != 0:
            continue
        name = opening_name(e.text)
        if name is None:
            continue
        full = _words(name)
        if len("".join(full)) > len("".join(short)) and _holds(full, short):
            return name
    return None


def titled(answer: str, evidence: Sequence[Evidence]) -> str | None:
    """The title of a retrieved page whose name `answer` says in full ("Frank Lowy" for
    "Sir Frank P. Lowy"), or None. Both end on the same word: "Deckers Creek Trail" is
    not the creek."""
    full = _words(answer)
    for title in dict.fromkeys(clean_title(e.title) for e in evidence if e.title):
        short = _words(title)
        if 2 <= len(short) < len(full) and full[-1] == short[-1] and _holds(full, short):
            return title
    return None


_ACRONYM = re.compile(r"[A-Z][A-Z&.]{1,8}")
_CAPITALISED_RUN = re.compile(r"[A-Z][\w'’\-]*(?:\s+(?:of|and|the|for|&|[A-Z][\w'’\-]*))*")
_SMALL = frozenset({"of", "and", "the", "for", "&"})


def spelled_out(acronym: str, evidence: Sequence[Evidence]) -> str | None:
    """The capitalised words whose initials spell `acronym`, from a sentence that also says
    the acronym; None when `acronym` is not one or no sentence spells it out."""
    if not _ACRONYM.fullmatch(acronym):
        return None
    letters = acronym.replace(".", "").replace("&", "")
    if not 2 <= len(letters) <= 6:
        return None
    pattern = re.compile(rf"(?<![\w.]){re.escape(acronym)}(?![\w])")
    for e in evidence:
        if not pattern.search(e.text):
            continue
        for run in _CAPITALISED_RUN.finditer(e.text):
            words = run.group(0).split()
            found = _spelling(words, letters)
            if found:
                return found
    return None


def _spelling(words: list[str], letters: str) -> str | None:
    """The words of `words` from one whose initial starts `letters` on, whose initials
    (small words skipped) spell exactly `letters`."""
    for start, first in enumerate(words):
        if first.lower() in _SMALL or first[0] != letters[0]:
            continue
        taken, i = [], 0
        for w in words[start:]:
            if w.lower() in _SMALL:
                taken.append(w)
                continue
            if i == len(letters) or w[0] != letters[i]:
                break
            taken.append(w)
            i += 1
        while taken and taken[-1].lower() in _SMALL:
            taken.pop()
        if i == len(letters) and len(taken) > 1:
            return " ".join(taken)
    return None


_MIDDLE = re.compile(r"\bmiddle names?\b", re.IGNORECASE)


def asks_middle_name(question: str) -> bool:
    return _MIDDLE.search(question) is not None


def middle_name(person: str, evidence: Sequence[Evidence]) -> tuple[str, str] | None:
    """(middle name, full name) of `person`, from the fuller name its page opens with (or
    the name itself when it has three words or more); None without a middle."""
    full = full_name(person, passages_of(person, evidence)) or person
    words = full.split()
    if len(words) < 3:
        return None
    return " ".join(words[1:-1]), full
