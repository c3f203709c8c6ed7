"""When the extractive answer shows the reader's short answer, and what it says when it does
not: the support arithmetic (app/reader/confidence.py) and the answer built around it
(app/answer.py), with a stand-in reader and engine, so no model loads."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from app.answer import (
    DESCRIPTION,
    NO_SHORT_ANSWER,
    NOT_FOUND,
    extractive_answer,
    shows_short,
)
from app.reader import Evidence, Reading, calibration
from app.reader.confidence import NO_SUPPORT, Support, found_share, margin
from app.reader.reader import DESCRIPTION_HOW
from app.retrieval.base import RetrievalResult, Trace
from app.settings import Settings
from graph.types import ChunkView


def test_support_needs_every_part() -> None:
    assert 0.0 < Support(1.0, 1.0, 1.0, 1.0).confidence < 1.0  # a probability
    assert Support(0.0, 1.0, 1.0, 1.0).confidence == 0.0  # the evidence lacks the question
    assert Support(1.0, 0.0, 1.0, 1.0).confidence == 0.0  # the answer's sentence says none of it
    assert Support(1.0, 1.0, 0.0, 1.0).confidence == 0.0  # not the type asked for
    assert NO_SUPPORT.confidence == 0.0


def test_more_support_is_more_confidence() -> None:
    strong = Support(1.0, 0.9, 1.0, margin=0.4, rank=1, words=2, label="PERSON")
    weak = Support(0.6, 0.3, 1.0, margin=0.02, rank=1, words=2, label="PERSON")
    assert strong.confidence > weak.confidence > 0.0


def test_a_close_rival_halves_the_product() -> None:
    alone = Support(0.8, 0.9, 1.0, margin=1.0)
    contested = Support(0.8, 0.9, 1.0, margin=0.0)
    assert contested.product == pytest.approx(alone.product / 2)
    assert contested.confidence < alone.confidence
    assert Support(0.8, 0.9, 1.0).product == alone.product  # options and yes/no have no rival


def test_the_calibration_is_shipped_whole() -> None:
    data = json.loads(calibration.FILE.read_text(encoding="utf-8"))
    assert set(data["weights"]) == set(calibration.FEATURES)
    assert data["fitted_on"].startswith("the even-indexed questions")
    assert calibration.shipped().weights["product"] > 0  # the hand-made fold still counts


def test_the_margin_skips_rivals_that_are_the_same_answer() -> None:
    # "Giotto di Bondone" is "Giotto" said in full, not a rival
    assert margin(("Giotto", 10.0), [("Giotto di Bondone", 9.9), ("Cimabue", 6.0)]) == 0.4
    assert margin(("Rush", 8.0), []) == 1.0
    assert margin(("Rush", -1.0), [("Hollowick", -2.0)]) == 0.0


def test_found_share_counts_a_word_in_either_form() -> None:
    question = [("released", "release"), ("bands", "band"), ("zxqv", "zxqv")]
    assert found_share(question, {"release", "bands"}) == pytest.approx(2 / 3)
    assert found_share([], {"anything"}) == 0.0  # emoji, punctuation: nothing to find


def test_shown_only_at_or_above_the_threshold() -> None:
    reading = Reading("Rush", "span", support=Support(1.0, 0.5, 1.0))
    at = reading.support.confidence
    assert shows_short(reading, at) and not shows_short(reading, at + 0.01)
    assert not shows_short(Reading("", "span", support=Support(1.0, 1.0)), 0.0)


class StandInReader:
    def __init__(self, reading: Reading) -> None:
        self.reading = reading

    def read(self, question: str, evidence: Any) -> Reading:
        self.reading.evidence = self.reading.evidence or [evidence[0]]
        return self.reading


def _engine(threshold: float) -> Any:
    return SimpleNamespace(
        analyzer=SimpleNamespace(tokens=lambda text: text.lower().split()),
        settings=Settings(answer_min_confidence=threshold),
    )


def _result(*texts: str) -> RetrievalResult:
    chunks = [
        ChunkView(f"c{n}", f"d{n}", 0, f"Page {n}", text, (f"Page {n}",), 20)
        for n, text in enumerate(texts, start=1)
    ]
    return RetrievalResult(
        "Which band released Counterparts?", "default", [], chunks, Trace("x", "q")
    )


TEXTS = (
    "Rush is a Canadian rock band from Toronto. Counterparts is their fifteenth album.",
    "Hollowick is a Canadian rock band from Oshawa.",
)


def test_a_supported_short_answer_leads_the_answer() -> None:
    reading = Reading("Rush", "span", support=Support(1.0, 0.9, 1.0, 0.5))
    at = reading.support.confidence
    ans = extractive_answer(_engine(at), _result(*TEXTS), StandInReader(reading))  # type: ignore[arg-type]
    assert ans.short == "Rush" and not ans.abstained
    assert ans.text.startswith("Rush [1]")
    assert ans.as_dict()["abstained"] is False and ans.as_dict()["confidence"] == ans.confidence


def test_below_the_threshold_the_answer_says_so_and_cites_the_closest_sentences() -> None:
    reading = Reading("Hollowick", "span", support=Support(0.9, 0.2, 1.0, 0.05))
    above = reading.support.confidence + 0.01
    ans = extractive_answer(_engine(above), _result(*TEXTS), StandInReader(reading))  # type: ignore[arg-type]
    assert ans.short == "" and ans.abstained
    assert ans.text.startswith(NO_SHORT_ANSWER)
    assert "Hollowick" not in ans.text.split("\n")[0]
    assert ans.evidence and all(f"{s} [{n}]" in ans.text for n, s in ans.evidence)
    assert ans.as_dict()["short"] == "" and ans.as_dict()["abstained"] is True


def test_the_closest_sentence_is_cited_first_when_nothing_is_supported() -> None:
    ranked = [
        Evidence(2, "Page 2", "Hollowick is a Canadian rock band from Oshawa.", 0.5, 0),
        Evidence(1, "Page 1", "Rush is a Canadian rock band from Toronto.", 0.5, 0),
    ]
    reading = Reading("", "span", [], ranked=ranked, how=DESCRIPTION_HOW, support=Support(1, 1))
    reader = StandInReader(reading)
    reader.read = lambda question, evidence: reading  # type: ignore[method-assign]
    ans = extractive_answer(_engine(0.4), _result(*TEXTS), reader)  # type: ignore[arg-type]
    assert ans.text.startswith(DESCRIPTION)
    assert ans.evidence[0][1] == ranked[0].text  # the best of the ranking, not dropped


def test_no_question_word_in_the_evidence_is_not_found() -> None:
    reading = Reading("", "span", how="no question word in evidence")
    reader = StandInReader(reading)
    ans = extractive_answer(_engine(0.0), _result(*TEXTS), reader)  # type: ignore[arg-type]
    assert ans.abstained and ans.text.startswith(NOT_FOUND) and ans.confidence == 0.0
    assert ans.evidence  # the closest passages still come with it


def test_no_context_is_not_found() -> None:
    ans = extractive_answer(_engine(0.4), _result(), StandInReader(Reading("", "span")))  # type: ignore[arg-type]
    assert ans.abstained and ans.text.startswith("Not found in the corpus")
