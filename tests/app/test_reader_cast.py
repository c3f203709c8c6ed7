"""Actor or character: the reader names the side of a cast line the question asks for
(`app/reader/cast.py`). spaCy is a model: all slow."""

from __future__ import annotations

import pytest

from app.reader import Reader, scoring
from app.reader.cast import asked_role, cast_pairs, cast_role
from app.reader.question import analyse
from tests.app.test_reader import evidence

pytestmark = pytest.mark.slow

FILM = (
    "Harbour Lights",
    "Harbour Lights is a 1994 drama film. It stars Nora Vance as Edith and Carla Moreno as "
    "Ruth, two sisters who run a lighthouse. Edith waits for her husband Tom (Peter Haldane) "
    "to come back from the sea.",
)
CHARACTER = (
    "Walter Finch",
    "Walter Finch is a fictional character and the narrator of the sitcom Harbour Days, "
    "portrayed by Dennis Lowe.",
)


@pytest.mark.parametrize(
    ("question", "role"),
    [
        ("Who played Edith's husband in Harbour Lights?", "actor"),
        ("What actor had the role of the narrator of Harbour Days?", "actor"),
        ("Who does Carla Moreno play in Harbour Lights?", "character"),
        ("What character does Nora Vance play?", "character"),
        # the small parser misses the object fronted before "does … play"
        ("In Night Tide, who does the actor of Walter Finch play?", "character"),
        ("Who did the original voice of the character that Nora Vance plays?", None),
        ("Who directed Harbour Lights?", None),
        # sport and music: playing for a team, with a band, is no part
        ("Who plays for the Detroit Lions?", None),
        ("Which team does not play their home games in Ohio?", None),
        ("What part did Dan Lewis play for Arsenal?", None),
    ],
)
def test_the_question_says_which_side_it_asks_for(
    reader: Reader, question: str, role: str | None
) -> None:
    assert asked_role(analyse(reader.parse([question])[0])) == role


def test_each_name_of_a_cast_line_has_its_side(reader: Reader) -> None:
    def side(sentence: str, name: str) -> str | None:
        doc = reader.parse([sentence])[0]
        start = next(t.i for t in doc if t.text == name.split()[0])
        return cast_role(doc, start, start + len(name.split()))

    stars = "It stars Nora Vance as Edith and Carla Moreno as Ruth."
    assert side(stars, "Nora Vance") == "actor"
    assert side(stars, "Ruth") == "character"
    waits = "Edith waits for her husband Tom (Peter Haldane) to come back."
    assert side(waits, "Tom") == "character"
    assert side(waits, "Peter Haldane") == "actor"
    portrayed = "Walter Finch is a fictional character, portrayed by Dennis Lowe."
    assert side(portrayed, "Dennis Lowe") == "actor"
    # parentheses that hold no person's name are no cast line
    born = "Jung Min-ho (Hangul: 정민호; born 6 February 1986) is a South Korean singer."
    assert side(born, "Jung Min-ho") is None


def test_the_reader_names_the_actor_or_the_character_asked_for(reader: Reader) -> None:
    ev = evidence(FILM, CHARACTER)
    assert reader.read("Who played Edith's husband in Harbour Lights?", ev).short == (
        "Peter Haldane"
    )
    assert reader.read("What actor had the role of the narrator of Harbour Days?", ev).short == (
        "Dennis Lowe"
    )
    assert reader.read("Who played Ruth in Harbour Lights?", ev).short == "Carla Moreno"
    assert reader.read("Who does Carla Moreno play in Harbour Lights?", ev).short == "Ruth"


SITCOM = (
    "Harbour Days",
    "Harbour Days is a sitcom about four friends in a port town, among them the fisherman "
    "Walter Finch (Dennis Lowe) and the baker Agnes Moll (Ruth Carver).",
)
ANIMATION = (
    "Night Tide",
    "Night Tide is a 2011 animated film. It stars Paul Gray as Captain Reed / the Admiral, "
    "Dennis Lowe as Moth / Tom Harker, Ivo Brandt as Ra's al Sahim and Ruth Carver as the Queen.",
)


def test_cast_lines_pair_each_actor_with_the_part_s_names() -> None:
    assert cast_pairs(ANIMATION[1].split(". ")[1]) == (
        ("paul gray", ("captain reed", "admiral")),
        ("dennis lowe", ("moth", "tom harker")),
        ("ivo brandt", ("ras al sahim",)),
        ("ruth carver", ("queen",)),
    )
    assert cast_pairs(SITCOM[1]) == (
        ("dennis lowe", ("walter finch",)),
        ("ruth carver", ("agnes moll",)),
    )


def test_the_part_an_actor_named_through_another_part_plays(
    reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "The actor of Walter Finch" is Dennis Lowe on the sitcom's page; the film's page
    pairs him with his part there. Without `recast` another of the film's parts wins."""
    ev = evidence(SITCOM, ANIMATION)
    question = "In Night Tide, who does the actor of Walter Finch from Harbour Days play?"
    assert reader.read(question, ev).short in ("Moth / Tom Harker", "Moth", "Tom Harker")
    monkeypatch.setitem(scoring.WEIGHTS, "recast", 0.0)
    assert reader.read(question, ev).short not in ("Moth / Tom Harker", "Moth", "Tom Harker")
