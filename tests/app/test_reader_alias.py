"""Nicknames: the reader names what a page says something is known by, when the question
asks for that (`app/reader/alias.py`). spaCy is a model: all slow."""

from __future__ import annotations

import pytest

from app.reader import Reader
from app.reader.alias import asks_alias, introduced_as_alias
from tests.app.test_reader import corpus_evidence, evidence

pytestmark = pytest.mark.slow

PLAYER = (
    "Carl Voss",
    'Carl Dean Voss (born May 2, 1961), nicknamed "The Vise", is a former American football '
    "player who played as a linebacker for the Portland Pilots. He played college football "
    "for the University of Idaho and was a two-time All-American.",
)
CLUB = (
    "Hartley Rovers F.C.",
    "Hartley Rovers Football Club, commonly referred to simply as Hartley or the Rovers, is "
    "an English football club that competes in the Northern League.",
)


def test_the_question_says_whether_it_asks_for_a_nickname() -> None:
    assert asks_alias("What is the nickname of the linebacker who played for Portland?")
    assert asks_alias("What is the nick name of this former player?")
    assert asks_alias("What was the club Leon Hart played for commonly referred to as ?")
    assert not asks_alias("What league, which is also known as the Northern League, began?")
    assert not asks_alias("Which club did Leon Hart play for?")


def test_a_name_introduced_as_another_name(reader: Reader) -> None:
    doc = reader.parse([CLUB[1]])[0]
    rovers = [t.i for t in doc if t.text == "Rovers"]
    northern = next(t.i for t in doc if t.text == "Northern")
    assert not introduced_as_alias(doc, rovers[0] - 1)  # the club's own name opens it
    assert introduced_as_alias(doc, rovers[-1])  # "referred to simply as … or the Rovers"
    assert not introduced_as_alias(doc, northern)  # past the verb "competes"


def test_the_reader_names_the_nickname_asked_for(reader: Reader) -> None:
    ev = evidence(PLAYER, CLUB)
    nickname = reader.read("What is the nickname of the linebacker who played for Portland?", ev)
    assert nickname.short in ("Vise", "The Vise")
    club = reader.read(
        "What is the English football club that competes in the Northern League commonly "
        "referred to as?",
        ev,
    )
    assert "Rovers" in club.short and "Football Club" not in club.short


def test_a_person_asked_for_is_named_by_name_not_nickname(reader: Reader) -> None:
    """Real HotpotQA passages: Mika Häkkinen's page opens with the name and then "nicknamed
    "The Flying Finn"", which the tagger takes for a name as well."""
    ev = corpus_evidence("p1784", "p1782", "p1779", "p1785", "p1781")
    asked = "McLaren MP4/11 was driven by what Finnish former professional racing driver"
    assert reader.read(asked, ev).short == "Mika Häkkinen"
