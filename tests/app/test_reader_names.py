"""A chosen option said as the question names it and as its page does (app/reader/names.py)."""

from __future__ import annotations

from app.reader.context import Evidence
from app.reader.names import full_name, opening_name


def _page(title: str, first: str) -> list[Evidence]:
    return [Evidence(1, title, first, 1.0, 0), Evidence(1, title, "He wrote plays.", 0.5, 1)]


def test_the_opening_name_of_a_page() -> None:
    assert opening_name("Otto Ludwig Preminger (5 December 1905 – 1986) was a director.") == (
        "Otto Ludwig Preminger"
    )
    assert opening_name("Louis-Hector Berlioz (11 December 1803 – 1869) was a composer") == (
        "Louis-Hector Berlioz"
    )
    assert opening_name("The film was released in 1990.") is None  # not a name
    assert opening_name("Rush is a Canadian rock band.") is None  # one word: nothing fuller


def test_full_name_holds_the_option_and_says_more() -> None:
    albee = _page(
        "Edward Albee", "Edward Franklin Albee III (March 12, 1928 – 2016) was a playwright."
    )
    assert full_name("Edward Albee", albee) == "Edward Franklin Albee III"
    initial = _page("Joseph L. Mankiewicz", "Joseph Leo Mankiewicz (1909 – 1993) was a director.")
    assert full_name("Joseph L. Mankiewicz", initial) == "Joseph Leo Mankiewicz"
    hyphen = _page("Hector Berlioz", "Louis-Hector Berlioz (1803 – 1869) was a composer.")
    assert full_name("Hector Berlioz", hyphen) == "Louis-Hector Berlioz"
    same = _page("Third Eye Blind", "Third Eye Blind is an American rock band.")
    assert full_name("Third Eye Blind", same) is None
    other = _page("Edward Albee", "John Smith (1900 – 1980) was a playwright.")
    assert full_name("Edward Albee", other) is None  # does not hold the option's words
    later = [Evidence(1, "Edward Albee", "Edward Franklin Albee III was born.", 1.0, 3)]
    assert full_name("Edward Albee", later) is None  # only a page's first sentence
