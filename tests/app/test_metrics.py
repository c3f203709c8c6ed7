"""Retrieval and answer metrics on hand-made cases whose values are worked out by hand."""

from __future__ import annotations

import math

import pytest

from app.eval.metrics import (
    answer_in,
    dedupe,
    exact_match,
    mrr,
    normalize_answer,
    percentile,
    recall_at_k,
    summarize,
    token_f1,
)

# ---- retrieval -----------------------------------------------------------------------


def test_dedupe_keeps_first_occurrence():
    assert dedupe(["p3", "p1", "p3", "p2", "p1"]) == ["p3", "p1", "p2"]


def test_duplicates_do_not_take_two_slots():
    # Two chunks of p1 come first; after de-duplication p2 is the 2nd passage, not the 3rd.
    ranking = ["p1", "p1", "p2", "p9"]
    assert recall_at_k(ranking, {"p2"}, 2) == 1.0
    assert recall_at_k(ranking, ["p1", "p2"], 2) == 1.0
    assert recall_at_k(ranking, ["p9"], 2) == 0.0
    assert mrr(ranking, {"p2"}) == 0.5


def test_several_gold_passages():
    ranking = ["p5", "p4", "p7", "p1", "p2"]
    gold = ["p1", "p4", "p8"]
    assert recall_at_k(ranking, gold, 1) == 0.0
    assert recall_at_k(ranking, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranking, gold, 5) == pytest.approx(2 / 3)
    assert mrr(ranking, gold) == 0.5


def test_duplicate_gold_ids_count_once():
    assert recall_at_k(["p1"], ["p1", "p1", "p2"], 5) == 0.5


def test_empty_retrieval():
    assert recall_at_k([], ["p1"], 5) == 0.0
    assert mrr([], ["p1"]) == 0.0


def test_k_larger_than_ranking_and_k_zero():
    assert recall_at_k(["p1", "p2"], ["p2", "p3"], 100) == 0.5
    assert recall_at_k(["p1", "p2"], ["p1"], 0) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(["p1"], ["p1"], -1)


def test_no_gold_is_an_error():
    with pytest.raises(ValueError):
        recall_at_k(["p1"], [], 5)
    with pytest.raises(ValueError):
        mrr(["p1"], set())


def test_mrr_first_position_and_miss():
    assert mrr(["p1", "p2"], ["p1", "p2"]) == 1.0
    assert mrr(["p3", "p3", "p3", "p2"], ["p2"]) == 0.5
    assert mrr(["p3", "p4"], ["p2"]) == 0.0


# ---- answers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  a   Tale of  Two Cities. ", "tale of two cities"),
        ("An apple, the pear; a plum", "apple pear plum"),
        ("Theory anthem", "theory anthem"),  # articles only as whole words
        ("U.S.A.", "usa"),
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, normalised: str):
    assert normalize_answer(raw) == normalised


def test_exact_match_normalises_and_takes_any_alias():
    assert exact_match("the Eiffel tower.", ["Eiffel Tower"]) == 1.0
    assert exact_match("Paris", ["London", "paris!"]) == 1.0
    assert exact_match("Paris, France", ["Paris"]) == 0.0


def test_token_f1_partial_overlap_by_hand():
    # pred tokens: [john, smith, jr] ; gold tokens: [john, smith]
    # overlap 2, precision 2/3, recall 1, F1 = 2·(2/3)·1 / (2/3 + 1) = 0.8
    assert token_f1("John Smith Jr.", ["John Smith"]) == pytest.approx(0.8)
    # pred [new, york, city] vs gold [york, city, council, building]:
    # overlap 2, P = 2/3, R = 1/2, F1 = 2·(1/3)/(7/6) = 4/7
    assert token_f1("New York City", ["the York City Council building"]) == pytest.approx(4 / 7)


def test_token_f1_counts_repeated_tokens_as_a_multiset():
    # pred [paris, paris] vs gold [paris]: overlap 1, P = 1/2, R = 1, F1 = 2/3
    assert token_f1("Paris Paris", ["Paris"]) == pytest.approx(2 / 3)


def test_token_f1_takes_the_best_alias():
    assert token_f1("Lothair II", ["Lothair the Second", "Lothair II"]) == 1.0
    assert token_f1("Lothair II", ["Lothair the Second"]) == pytest.approx(
        2 * (1 / 2) * (1 / 2) / (1 / 2 + 1 / 2)
    )


def test_token_f1_no_overlap_and_empty_after_normalisation():
    assert token_f1("Berlin", ["Paris"]) == 0.0
    assert token_f1("the", ["a"]) == 1.0  # both normalise to nothing
    assert token_f1("the", ["Paris"]) == 0.0
    assert exact_match("The", ["an"]) == 1.0


def test_answer_in_is_a_whole_token_match_after_normalisation():
    assert answer_in("the Canadian band Rush!", ["Rush"]) == 1.0
    assert answer_in("Nottingham", ["no"]) == 0.0  # not inside a word
    assert answer_in("it was Hewlett-Packard", ["Compaq", "HewlettPackard"]) == 1.0
    assert answer_in("The Who", ["who"]) == 1.0  # articles and case do not count
    assert answer_in("", ["Rush"]) == 0.0
    assert answer_in("anything", ["the"]) == 0.0  # an alias that normalises to nothing
    with pytest.raises(ValueError):
        answer_in("x", [])


def test_squad_normalisation_order_matches_the_official_script():
    # lower → drop punctuation → drop articles → collapse whitespace: "A.B." loses its
    # dots before the article pass, so "a" inside "ab" survives; "The-End" becomes "theend".
    assert normalize_answer("A.B. the C") == "ab c"
    assert normalize_answer("The-End") == "theend"
    assert normalize_answer("an\tapple\n") == "apple"
    assert exact_match("the  Beatles", ["Beatles"]) == 1.0
    assert token_f1("Beatles, the band", ["The Beatles"]) == pytest.approx(2 / 3)


def test_answers_must_be_a_non_empty_sequence():
    with pytest.raises(ValueError):
        exact_match("x", [])
    with pytest.raises(ValueError):
        token_f1("x", [])
    with pytest.raises(TypeError):
        token_f1("x", "x")  # type: ignore[arg-type]


# ---- latency -------------------------------------------------------------------------


def test_percentile_is_linear():
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)  # rank 0.95·3 = 2.85
    assert percentile(values, 0) == 10.0 and percentile(values, 100) == 40.0
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_summarize():
    summary = summarize(x for x in [4.0, 1.0, 3.0, 2.0])
    assert summary == {
        "count": 4,
        "mean": 2.5,
        "min": 1.0,
        "max": 4.0,
        "p50": 2.5,
        "p95": pytest.approx(3.85),
    }
    assert set(summarize([1.0], percentiles=(99.9,))) >= {"p99.9"}
    empty = summarize([])
    assert empty["count"] == 0 and math.isnan(empty["p95"]) and math.isnan(empty["mean"])
