"""A name said as the question or the page title names it and as its page does
(app/reader/names.py)."""

from __future__ import annotations

from app.reader.context import Evidence
from app.reader.names import full_name, middle_name, opening_name, spelled_out, titled
from app.reader.reader import shared_reader


def _page(title: str, first: str) -> list[Evidence]:
    return [Evidence(1, title, first, 1.0, 0), Evidence(1, title, "He wrote plays.", 0.5, 1)]


def test_the_opening_name_of_a_page() -> None:
    assert opening_name("Otto Ludwig Preminger (5 December 1905 – 1986) was a director.") == (
        "Otto Ludwig Preminger"
    )
    assert opening_name("Louis-Hector Berlioz (11 December 1803 – 1869) was a composer") == (
        "Louis-Hector Berlioz"
    )
    assert opening_name('Massimo Antonio "Max" Calvo (born 1969) is a singer.') == (
        'Massimo Antonio "Max" Calvo'
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


def test_a_full_name_read_from_a_page_is_titled_by_the_page() -> None:
    lowy = _page("Frank Lowy", "Sir Frank P. Lowy (born 1930) is a businessman.")
    assert titled("Sir Frank P. Lowy", lowy) == "Frank Lowy"
    disambiguated = _page("Timothy McVeigh (bomber)", "Timothy James McVeigh was a terrorist.")
    assert titled("Timothy James McVeigh", disambiguated) == "Timothy McVeigh"
    creek = _page("Deckers Creek", "Deckers Creek is a tributary of the Monongahela River.")
    assert titled("The Deckers Creek Trail", creek) is None  # another thing: another head
    assert titled("Frank Lowy", lowy) is None  # the title itself: nothing to add
    assert titled("Sir Frank P. Lowy", _page("Lowy", "Lowy is a surname.")) is None  # one word


def test_a_span_answer_leads_with_its_page_title() -> None:
    lowy = [
        Evidence(
            1, "Frank Lowy", "Sir Frank P. Lowy (born 1930) is an Australian businessman.", 1.0, 0
        ),
        Evidence(1, "Frank Lowy", "He chaired the Australia 2022 FIFA World Cup bid.", 0.9, 1),
    ]
    reading = shared_reader().read("Which businessman chaired the Australia 2022 bid?", lowy)
    assert reading.short == "Frank Lowy (Sir Frank P. Lowy)"


def test_an_acronym_is_spelled_out_from_the_evidence() -> None:
    sentences = [
        Evidence(
            1,
            "Gil Brand",
            "Gil Brand is the commissioner of the Northern Hockey "
            "League (NHL), a post he has held since 1993.",
            1.0,
            0,
        ),
        Evidence(
            2,
            "Tanga Breweries",
            "Tanga Breweries Limited, commonly referred to as TBL, "
            "is a Kenya-based holding company.",
            1.0,
            0,
        ),
        Evidence(3, "Ida Kerr", "Ida Kerr worked for NASA and the U.S. Army.", 1.0, 0),
    ]
    assert spelled_out("NHL", sentences) == "Northern Hockey League"
    assert spelled_out("TBL", sentences) == "Tanga Breweries Limited"
    assert spelled_out("NASA", sentences) is None  # no sentence spells it out
    assert spelled_out("Gil Brand", sentences) is None  # not an acronym
    reading = shared_reader().read("What Kenya-based company owns the Tusker brand?", sentences)
    assert reading.short == "Tanga Breweries Limited (TBL)"


def test_a_middle_name_asked_for_is_read_from_the_full_name() -> None:
    sentences = [
        Evidence(1, "The Long Road", '"The Long Road" profiles the investor Paul Haas.', 1.0, 0),
        Evidence(2, "Paul Haas", "Paul Anton Haas (born 1967) is an American investor.", 1.0, 0),
    ]
    assert middle_name("Paul Haas", sentences) == ("Anton", "Paul Anton Haas")
    assert middle_name("Ida Kerr", sentences) is None  # no fuller name, no middle
    reading = shared_reader().read(
        "What is the middle name of the investor profiled in The Long Road?", sentences
    )
    assert reading.short == "Anton (Paul Anton Haas)"
