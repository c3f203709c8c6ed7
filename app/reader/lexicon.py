"""Word lists the reader uses to read a question: which entity types a wh-word or the noun
it asks about expects, and which words order a comparison. Plain English, written by hand
from the spaCy (OntoNotes) label set; nothing here is fitted to a dataset.
"""

from __future__ import annotations

from ingest.tokens import english_stop_words

STOP = frozenset(w.lower() for w in english_stop_words()) | {"'s", "’s", "name", "called", "named"}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


AUXILIARIES = _words(
    "is are was were do does did has have had can could will would should may might must shall"
)

# Labels of names, which the small NER model often swaps for one another.
NAMED = _words("PERSON ORG GPE LOC FAC NORP PRODUCT WORK_OF_ART EVENT LAW LANGUAGE PROPN")

# "NOUN" is the label of a candidate that is a plain noun phrase (no named entity), the
# answer to "what profession", "which genre", "what kind of animal".
WH_LABELS: dict[str, dict[str, float]] = {
    "who": {"PERSON": 1.0, "ORG": 0.5, "NORP": 0.3, "PROPN": 0.5},
    "whose": {"PERSON": 1.0, "PROPN": 0.5},
    "when": {"DATE": 1.0, "YEAR": 0.8, "TIME": 0.6, "EVENT": 0.2},
    "where": {"GPE": 1.0, "LOC": 1.0, "FAC": 0.8, "ORG": 0.4, "PROPN": 0.4},
    "how many": {"CARDINAL": 1.0, "QUANTITY": 0.7, "MONEY": 0.3, "PERCENT": 0.3, "DATE": 0.2},
    "how much": {"MONEY": 1.0, "QUANTITY": 0.8, "CARDINAL": 0.6, "PERCENT": 0.6},
    "how long": {"DATE": 1.0, "QUANTITY": 0.8, "TIME": 0.6, "CARDINAL": 0.3},
    "how old": {"DATE": 0.8, "CARDINAL": 0.8},
    "how tall": {"QUANTITY": 1.0, "CARDINAL": 0.5},
    "how high": {"QUANTITY": 1.0, "CARDINAL": 0.5},
    "how far": {"QUANTITY": 1.0, "CARDINAL": 0.5},
    "how big": {"QUANTITY": 1.0, "CARDINAL": 0.5},
    "how large": {"QUANTITY": 1.0, "CARDINAL": 0.5},
}


def _labelled(words: str, labels: dict[str, float]) -> dict[str, dict[str, float]]:
    return {w: labels for w in words.split()}


_PLACE = {"GPE": 1.0, "LOC": 0.8, "FAC": 0.3, "PROPN": 0.5}
_NATURE = {"LOC": 1.0, "GPE": 0.6, "FAC": 0.4, "PROPN": 0.5}
_ORG = {"ORG": 1.0, "PROPN": 0.6, "NORP": 0.2, "PERSON": 0.2}
PERSON_LABELS = {"PERSON": 1.0, "PROPN": 0.5}
_WORK = {"WORK_OF_ART": 1.0, "PROPN": 0.6, "PRODUCT": 0.4, "ORG": 0.3, "EVENT": 0.2}
_FACILITY = {"FAC": 1.0, "ORG": 0.6, "GPE": 0.3, "PROPN": 0.5}
CLASS_LABELS = {"NOUN": 1.0, "NORP": 0.3}

# Asked-for places an address names first ("Clatskanie, Oregon"): the smallest in it.
SETTLEMENTS = frozenset(
    {"city", "town", "village", "suburb", "municipality", "commune", "hamlet", "borough"}
    | {"hometown", "birthplace"}
)

HEAD_LABELS: dict[str, dict[str, float]] = {
    **_labelled("year", {"YEAR": 1.0, "DATE": 0.6}),
    **_labelled("date decade century month day era", {"DATE": 1.0, "YEAR": 0.6, "TIME": 0.3}),
    **_labelled("time", {"DATE": 0.8, "TIME": 1.0}),
    **_labelled(
        "city town country state county province region village nation capital municipality "
        "district borough suburb place location area neighborhood neighbourhood commune "
        "prefecture territory kingdom empire hometown birthplace",
        _PLACE,
    ),
    **_labelled(
        "river mountain lake sea ocean continent island peninsula valley desert volcano "
        "peak bay strait",
        _NATURE,
    ),
    **_labelled("nationality ethnicity religion descent", {"NORP": 1.0, "GPE": 0.3, "NOUN": 0.3}),
    **_labelled("language", {"LANGUAGE": 1.0, "NORP": 0.6}),
    **_labelled(
        "band group company team club university college school organization organisation "
        "party network label airline newspaper firm corporation brand agency league channel "
        "station studio manufacturer publisher institution franchise retailer chain "
        "conglomerate subsidiary orchestra ensemble duo trio army navy employer",
        _ORG,
    ),
    **_labelled(
        "person man woman actor actress singer player author writer director musician "
        "artist composer politician king queen president footballer poet producer leader "
        "character wife husband son daughter father mother brother sister sibling spouse "
        "child founder member drummer guitarist vocalist rapper coach manager novelist "
        "playwright scientist philosopher painter designer architect emperor prince "
        "princess ruler monarch general officer governor senator minister chancellor "
        "mayor judge lawyer comedian dancer model cricketer boxer wrestler athlete jockey "
        "driver pilot astronaut explorer inventor engineer economist journalist "
        "broadcaster host presenter screenwriter cinematographer editor illustrator "
        "cartoonist creator owner ceo chairman pope bishop saint god goddess heir "
        "successor predecessor grandson granddaughter grandfather grandmother uncle aunt "
        "nephew niece cousin partner",
        PERSON_LABELS,
    ),
    **_labelled(
        "film movie album song book novel play show series opera poem single painting "
        "work magazine documentary musical sitcom episode comic manga anime video ep "
        "soundtrack record",
        _WORK,
    ),
    **_labelled("game", {**_WORK, "PRODUCT": 0.8}),
    **_labelled(
        "war battle event tournament championship festival election competition "
        "race cup revolution",
        {"EVENT": 1.0, "PROPN": 0.5, "DATE": 0.2},
    ),
    **_labelled(
        "award prize honor honour medal title",
        {"WORK_OF_ART": 0.7, "EVENT": 0.5, "ORG": 0.4, "PROPN": 0.6, "NOUN": 0.3},
    ),
    **_labelled(
        "building stadium airport bridge venue arena hotel museum church cathedral "
        "theatre theater tower castle palace temple hospital prison street road highway "
        "railway line",
        _FACILITY,
    ),
    **_labelled("version release", {"VERSION": 1.0, "CARDINAL": 0.3, "DATE": 0.3}),
    **_labelled("number population amount", {"CARDINAL": 1.0, "PERCENT": 0.6}),
    **_labelled("percentage percent proportion", {"PERCENT": 1.0, "CARDINAL": 0.5}),
    **_labelled(
        "profession occupation job position role genre kind type species genus breed "
        "animal instrument sport style form family order class category field discipline "
        "material product plant",
        CLASS_LABELS,
    ),
}

# Nouns that ask for a quantity ("What page size …", "the highest … number"): the answer
# names a number, whatever else the question's words suggest (a setting's name is not a
# size).
QUANTITY_HEADS = _words(
    "size number limit length count amount maximum minimum capacity precision width height "
    "depth weight duration timeout threshold population percentage percent"
)

# Nouns a developer asks for when the answer is something to type (`code`), and the
# types such an answer has; a how-to question ("how do I …") asks for the same.
TECH_HEADS = _words(
    "setting option pragma flag function command statement keyword parameter error tool "
    "clause macro api directive configuration config argument syntax operator method "
    "constant variable extension module package library"
)
TECHNICAL_LABELS = {"CODE": 1.0, "VERSION": 0.5, "CARDINAL": 0.3, "NOUN": 0.3}
HOW_TO_SUBJECTS = _words("i we you one")

# Verbs of playing a part, which pair an actor with a character (`cast`).
PLAY_VERBS = _words(
    "play plays played playing portray portrays portrayed portraying voice voices voiced "
    "voicing star stars starred starring"
)

# Words that order a comparison of the two options by a date or a number.
EARLIER_WORDS = _words("first earlier earliest older oldest before sooner") | {
    "born first",
    "came first",
    "came out first",
    "released first",
}
LATER_WORDS = _words("later latest younger youngest newer newest recently recent after") | {
    "more recently",
    "most recently",
}
LARGER_WORDS = _words(
    "more most larger largest bigger biggest higher highest taller tallest longer longest "
    "greater greatest many"
)
SMALLER_WORDS = _words("fewer fewest less least smaller smallest lower lowest shorter shortest")
# Comparisons of height: decided by a measured length ("8,051 m"), which the NER model
# often tags as a date.
TALLER_WORDS = _words("taller tallest higher highest")
SHORTER_WORDS = _words("shorter shortest lower lowest")
# Words that make "older"/"longer" a question about a lifespan (of a person, or how long
# a thing was in operation), not about a date.
LIFESPAN_WORDS = _words("age life lived operational active existed lasted operated")
