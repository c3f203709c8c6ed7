"""Token validity and co-occurrence weights, checked against counts made by hand."""

from __future__ import annotations

from ingest.config import TokenConfig
from ingest.token_graph import cooccurrence, cooccurrence_delta
from ingest.tokens import Analyzer


def test_valid_tokens_keep_years_and_large_numbers() -> None:
    a = Analyzer(TokenConfig())
    text = "In 1950, the 2nd of 11 films by Ann's studio sold 20000 copies (and it's gone)!"
    # "in", "the", "of", "by", "and", "it" are stopwords; "11", "s" are too short.
    assert a.tokens(text) == [
        "1950",
        "2nd",
        "films",
        "ann",
        "studio",
        "sold",
        "20000",
        "copies",
        "gone",
    ]


def test_window_counts_every_position_pair_once() -> None:
    # Sequence a b c a d, window w=4: pairs at distance 1..3.
    # d=1: ab bc ca ad; d=2: ac ba cd; d=3: aa(skip) bd.
    # {a,b}: ab, ba → 2; {a,c}: ca, ac → 2; {a,d}: ad → 1; {b,c}: 1; {c,d}: 1; {b,d}: 1.
    got = cooccurrence(["a", "b", "c", "a", "d"], window=4)
    assert dict(got) == {
        ("a", "b"): 2,
        ("a", "c"): 2,
        ("a", "d"): 1,
        ("b", "c"): 1,
        ("c", "d"): 1,
        ("b", "d"): 1,
    }


def test_window_two_is_adjacent_pairs_only() -> None:
    assert dict(cooccurrence(["x", "y", "z"], window=2)) == {("x", "y"): 1, ("y", "z"): 1}


def test_short_sequences() -> None:
    assert dict(cooccurrence([], 4)) == {}
    assert dict(cooccurrence(["solo"], 4)) == {}
    assert dict(cooccurrence(["same", "same"], 4)) == {}


def test_corpus_weights_by_hand() -> None:
    """A tiny corpus: every weight below was counted by hand."""
    analyzer = Analyzer(TokenConfig())
    chunks = [
        "Marie Curie studied radium in Paris.",  # marie curie studied radium paris
        "Curie found radium; radium glowed in Paris labs.",
    ]
    seqs = [analyzer.tokens(c) for c in chunks]
    assert seqs[0] == ["marie", "curie", "studied", "radium", "paris"]
    assert seqs[1] == ["curie", "found", "radium", "radium", "glowed", "paris", "labs"]
    weights = cooccurrence_delta(seqs, [], window=4)
    # chunk 1 (w=4): marie-curie, marie-studied, marie-radium, curie-studied, curie-radium,
    #   curie-paris, studied-radium, studied-paris, radium-paris → each 1.
    # chunk 2: curie-found 1, curie-radium 2 (positions 0-2, 0-3), found-radium 2, found-glowed 1,
    #   radium-glowed 2, radium-paris 2 (2-5, 3-5), glowed-paris 1, glowed-labs 1, paris-labs 1,
    #   radium-labs 1 (3-6); radium-radium skipped.
    expected = {
        ("curie", "marie"): 1,
        ("marie", "studied"): 1,
        ("marie", "radium"): 1,
        ("curie", "studied"): 1,
        ("curie", "radium"): 1 + 2,
        ("curie", "paris"): 1,
        ("radium", "studied"): 1,
        ("paris", "studied"): 1,
        ("paris", "radium"): 1 + 2,
        ("curie", "found"): 1,
        ("found", "radium"): 2,
        ("found", "glowed"): 1,
        ("glowed", "radium"): 2,
        ("glowed", "paris"): 1,
        ("glowed", "labs"): 1,
        ("labs", "paris"): 1,
        ("labs", "radium"): 1,
    }
    assert weights == expected


def test_delta_of_removal_undoes_addition() -> None:
    seqs = [["alpha", "beta", "gamma"], ["beta", "delta"]]
    assert cooccurrence_delta(seqs, seqs, 4) == {}
    partial = cooccurrence_delta(seqs, seqs[:1], 4)
    assert partial == {("beta", "delta"): 1}
