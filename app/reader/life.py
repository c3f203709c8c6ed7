"""Birth and death: which of a biography's dates and places a question asks for.

"When did X die?" and "Where was X born?" are answered on X's page, which gives both:
"X (3 June 1892 – 13 March 1974) was …", "born in Paris, … died in Rome". Both dates are
DATE candidates of the same sentence and both places GPE candidates, so the entity type
cannot tell them apart; the event the candidate is said of can: the first date of a
lifespan is the birth and the second the death, and a place or date follows the verb of
its event ("born in", "died on").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from spacy.tokens import Doc


Event = Literal["birth", "death"]

_ASKED: dict[Event, frozenset[str]] = {
    "birth": frozenset({"born", "bear", "birth", "birthplace", "birthday"}),
    "death": frozenset({"die", "died", "death", "dead", "deathplace"}),
}
_SAID: dict[str, Event] = {"born": "birth", "birth": "birth", "died": "death", "death": "death"}
TRIGGER_WINDOW = 8  # tokens after "born" / "died" within which its place or date is said
_LIFESPAN = re.compile(r"\(([^()]*?\d{3,4}[^()]*?)\s*[–—-]\s*([^()]*?\d{3,4}[^()]*?)\)")


def asked_event(content: frozenset[str], focus: frozenset[str]) -> Event | None:
    """The event the question asks about: from the words around its wh-word when they name
    one event, else from the whole question when it names only one."""
    for words in (focus, content):
        named = [event for event, cues in _ASKED.items() if cues & words]
        if len(named) == 1:
            return named[0]
    return None


def said_event(doc: Doc, start: int, end: int) -> Event | None:
    """The event the span doc[start:end] is said of, or None."""
    if end <= start:
        return None
    begin, stop = doc[start].idx, doc[end - 1].idx + len(doc[end - 1])
    for match in _LIFESPAN.finditer(doc.text):
        if match.start(1) <= begin and stop <= match.end(1):
            return "birth"
        if match.start(2) <= begin and stop <= match.end(2):
            return "death"
    for t in reversed(doc[max(start - TRIGGER_WINDOW, 0) : start]):
        if t.lower_ in _SAID:
            return _SAID[t.lower_]
        if t.is_sent_start or t.text in (";", "."):
            break
    return None


def event_match(asked: Event | None, doc: Doc, start: int, end: int) -> float:
    """1 when the span is said of the asked event, -1 when of the other one, else 0."""
    if asked is None:
        return 0.0
    said = said_event(doc, start, end)
    return 0.0 if said is None else (1.0 if said == asked else -1.0)
