"""LexicalIndex must reproduce rank-bm25's BM25Okapi exactly and fast, also when its rows are
folded from incremental pieces (merge_terms) instead of read from the store in one go."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from scipy import sparse

from graph.base import TermMatrix
from graph.lexical import Bm25Params, LexicalIndex, merge_terms, select_rows
from graph.postings import Postings
from tests.conftest import DATASETS

CORPUS_2WIKI = DATASETS / "2wiki-dev" / "corpus.jsonl"

# "the" is in more than half the documents (negative raw idf → ε floor), "fox" repeats
# inside a document, and the last document is empty (it still counts in N and avgdl).
HAND_CORPUS = [
    text.split()
    for text in (
        "the quick brown fox jumps over the lazy dog",
        "the fox fox fox runs",
        "a lazy cat sleeps in the sun",
        "the dog barks at the cat",
        "quantum physics lecture",
        "",
    )
]


def term_matrix(docs: list[list[str]], extra_vocab: tuple[str, ...] = ()) -> TermMatrix:
    """The TermMatrix a store would hand over for these token lists."""
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for r, doc in enumerate(docs):
        for token, count in Counter(doc).items():
            rows.append(r)
            cols.append(vocab.setdefault(token, len(vocab)))
            vals.append(count)
    for token in extra_vocab:
        vocab.setdefault(token, len(vocab))
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)))
    return TermMatrix([f"c{i}" for i in range(len(docs))], list(vocab), tf)


@pytest.fixture(scope="module")
def hand_index() -> LexicalIndex:
    return LexicalIndex.build(term_matrix(HAND_CORPUS), Bm25Params())


@pytest.mark.parametrize(
    "query",
    [
        ["fox"],
        ["the"],
        ["lazy", "dog"],
        ["fox", "fox"],  # repeated term counts twice
        ["the", "the", "cat", "unknownword"],  # out-of-vocabulary term contributes nothing
        ["unknownword"],
        [],
    ],
)
def test_scores_equal_rank_bm25_on_hand_corpus(hand_index: LexicalIndex, query: list[str]):
    expected = BM25Okapi(HAND_CORPUS).get_scores(query)
    assert np.allclose(hand_index.scores(query), expected, rtol=1e-12, atol=1e-12)


def test_weight_matches_hand_computation(hand_index: LexicalIndex):
    n_docs, k1, b = len(HAND_CORPUS), 1.5, 0.75
    vocab = {t for doc in HAND_CORPUS for t in doc}
    df = {t: sum(t in doc for doc in HAND_CORPUS) for t in vocab}
    raw = {t: math.log(n_docs - n + 0.5) - math.log(n + 0.5) for t, n in df.items()}
    avgdl = sum(map(len, HAND_CORPUS)) / n_docs
    # "fox" (df 2 of 6) keeps its idf; "the" (df 4 of 6) is floored to ε × mean idf.
    fox_idf = math.log(4.5 / 2.5)
    tf, dl = 3, 5
    fox_weight = fox_idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
    the_idf = 0.25 * sum(raw.values()) / len(raw)
    row = hand_index.chunk_ids.index("c1")
    assert hand_index.scores(["fox"])[row] == pytest.approx(fox_weight)
    assert raw["the"] < 0
    assert hand_index.idf_of("the") == pytest.approx(the_idf)


def test_unused_vocabulary_and_explicit_zeros_change_nothing(hand_index: LexicalIndex):
    terms = term_matrix(HAND_CORPUS, extra_vocab=("orphan", "ghost"))
    tf = terms.tf.tolil()
    tf[4, terms.vocabulary.index("ghost")] = 0  # an explicit stored zero after conversion
    terms.tf = tf.tocsr()
    index = LexicalIndex.build(terms, Bm25Params())
    for query in (["the", "fox"], ["orphan", "ghost", "cat"]):
        assert np.allclose(index.scores(query), hand_index.scores(query))
    assert "orphan" not in index.vocabulary and index.term_id("orphan") is None
    assert index.vocabulary == hand_index.vocabulary


def test_weighted_scores_is_the_weighted_sum_of_term_scores(hand_index: LexicalIndex):
    weights = {"fox": 0.5, "lazy": 0.3, "the": 0.2, "unknownword": 9.0, "cat": 0.0}
    expected = sum(w * hand_index.scores([t]) for t, w in weights.items())
    assert np.allclose(hand_index.weighted_scores(weights), expected)
    assert np.allclose(hand_index.weighted_scores({"fox": 2.0}), hand_index.scores(["fox", "fox"]))
    presence = hand_index.weighted_presence({"fox": 2.0, "cat": 1.0})
    assert presence.tolist() == [2.0, 2.0, 1.0, 1.0, 0.0, 0.0]


def test_top_k_orders_and_skips_non_matching(hand_index: LexicalIndex):
    query = ["lazy", "dog"]
    expected = BM25Okapi(HAND_CORPUS).get_scores(query)
    top = hand_index.top_k(query, 10)
    matching = [i for i, doc in enumerate(HAND_CORPUS) if set(doc) & set(query)]
    ranked = sorted(matching, key=lambda i: (-expected[i], i))
    assert [cid for cid, _ in top] == [f"c{i}" for i in ranked]
    assert [score for _, score in top] == pytest.approx([expected[i] for i in ranked])
    assert len(hand_index.top_k(query, 1)) == 1
    assert hand_index.top_k(query, 0) == []
    assert hand_index.top_k(["unknownword"], 5) == []


def test_top_k_breaks_ties_by_chunk_order():
    docs = [["x", "y"], ["z", "w"], ["x", "y"], ["x", "y"], ["q", "r"]]
    index = LexicalIndex.build(term_matrix(docs), Bm25Params())
    assert [cid for cid, _ in index.top_k(["x"], 2)] == ["c0", "c2"]
    assert [cid for cid, _ in index.top_k(["x"], 5)] == ["c0", "c2", "c3"]


def test_term_ids(hand_index: LexicalIndex):
    ids = hand_index.term_ids(["fox", "nope", "the", "fox"])
    assert ids[0] == ids[2] != ids[1] and len(ids) == 3
    assert [hand_index.document_frequency(i) for i in ids] == [2, 4, 2]
    assert hand_index.chunk_ids[hand_index.postings(ids[0])[0]] == "c0"


def test_empty_corpus_and_bad_shapes():
    empty = LexicalIndex.build(TermMatrix([], [], sparse.csr_matrix((0, 0))), Bm25Params())
    assert len(empty) == 0
    assert empty.scores(["a"]).shape == (0,)
    assert empty.top_k(["a"], 3) == []
    with pytest.raises(ValueError):
        LexicalIndex.build(TermMatrix(["a"], ["x", "y"], sparse.csr_matrix((2, 2))))


def test_params_are_used():
    params = Bm25Params(k1=0.9, b=0.4, epsilon=0.1)
    index = LexicalIndex.build(term_matrix(HAND_CORPUS), params)
    expected = BM25Okapi(HAND_CORPUS, k1=0.9, b=0.4, epsilon=0.1).get_scores(["the", "fox"])
    assert np.allclose(index.scores(["the", "fox"]), expected)


def test_scores_equal_rank_bm25_on_2wiki_passages():
    tokenize = re.compile(r"\w+").findall
    with CORPUS_2WIKI.open(encoding="utf-8") as fh:
        passages = [json.loads(line) for _, line in zip(range(500), fh, strict=False)]
    docs = [tokenize(f"{p['title']} {p['text']}".lower()) for p in passages]
    index = LexicalIndex.build(term_matrix(docs), Bm25Params())
    reference = BM25Okapi(docs)

    rng = random.Random(7)
    vocab = sorted({t for doc in docs for t in doc})
    queries = [rng.sample(vocab, rng.randint(1, 8)) for _ in range(46)]
    queries.append(["zzzznotaword", *queries[0]])  # out-of-vocabulary term
    queries.append(["the", "the", "of", *queries[1], *queries[1]])  # repeats, common terms
    queries.append([docs[3][0]] * 4)
    queries.append(tokenize(passages[10]["text"].lower()))  # a long natural query
    for query in queries:
        assert np.allclose(index.scores(query), reference.get_scores(query)), query
    weights = {t: rng.random() for t in rng.sample(vocab, 300)}
    expected = sum(w * reference.get_scores([t]) for t, w in weights.items())
    assert np.allclose(index.weighted_scores(weights), expected)


def part(docs: dict[str, list[str]]) -> TermMatrix:
    """A term matrix over these documents with its own vocabulary, rows in dict order."""
    terms = term_matrix(list(docs.values()))
    return TermMatrix(list(docs), terms.vocabulary, terms.tf)


def assert_same_index(a: LexicalIndex, b: LexicalIndex) -> None:
    """Same rows, vocabulary and idf, and every term's scores bit for bit."""
    assert a.chunk_ids == b.chunk_ids and a.vocabulary == b.vocabulary
    for term in a.vocabulary:
        assert a.idf_of(term) == b.idf_of(term), term
        assert np.array_equal(a.scores([term]), b.scores([term])), term


def test_an_index_over_parts_scores_as_one_build():
    """A base part with dropped rows plus delta parts, each row placed at its canonical
    position: the index equals a fresh build over the live rows, ties and all."""
    tokenize = re.compile(r"\w+").findall
    with CORPUS_2WIKI.open(encoding="utf-8") as fh:
        passages = [json.loads(line) for _, line in zip(range(300), fh, strict=False)]
    texts = {f"d{i:03d}": tokenize(p["text"].lower()) for i, p in enumerate(passages)}
    rng = random.Random(11)
    base_ids = sorted(texts)[:250]
    dropped = set(rng.sample(base_ids, 30))
    deltas = [sorted(texts)[250:280], [*sorted(texts)[280:], "d000x"]]
    texts["d000x"] = ["fresh", "words", *texts["d001"]]
    live = sorted([c for c in base_ids if c not in dropped] + deltas[0] + deltas[1])
    position = {c: i for i, c in enumerate(live)}
    parts = []
    for ids in (base_ids, *deltas):
        terms = merge_terms([part({c: texts[c] for c in ids})])
        at = np.asarray([position.get(c, -1) for c in terms.chunk_ids], dtype=np.int64)
        parts.append((Postings.from_matrix(terms.vocabulary, terms.tf), at))
    folded = LexicalIndex(parts, live)
    fresh = LexicalIndex.build(merge_terms([part({c: texts[c] for c in live})]))
    assert_same_index(folded, fresh)
    query = rng.sample(folded.vocabulary, 6)
    assert folded.top_k(query, 10) == fresh.top_k(query, 10)
    assert np.array_equal(
        folded.weighted_presence({"fresh": 1.0}), fresh.weighted_presence({"fresh": 1.0})
    )


def test_merge_terms_is_canonical_whatever_the_split():
    docs = {f"c{i}": doc for i, doc in enumerate(HAND_CORPUS)}
    whole = merge_terms([part(docs)])
    assert whole.chunk_ids == sorted(docs) and whole.vocabulary == sorted(whole.vocabulary)
    pieces = [
        part({k: docs[k] for k in keys}) for keys in (["c5", "c2"], ["c0"], ["c4", "c1", "c3"])
    ]
    merged = merge_terms(pieces)
    assert merged.chunk_ids == whole.chunk_ids and merged.vocabulary == whole.vocabulary
    assert (merged.tf != whole.tf).nnz == 0
    with pytest.raises(ValueError):
        merge_terms([part({"c0": ["a"]}), part({"c0": ["b"]})])
    assert len(merge_terms([]).chunk_ids) == 0


def test_select_rows_then_merge_drops_unused_terms():
    docs = {"a": ["x", "y"], "b": ["y", "z"], "c": ["q"]}
    kept = merge_terms([select_rows(part(docs), np.array([True, False, True]))])
    assert kept.chunk_ids == ["a", "c"] and kept.vocabulary == ["q", "x", "y"]
    with pytest.raises(ValueError):
        select_rows(part(docs), np.array([True]))


def test_random_edits_fold_to_the_fresh_index_and_rank_bm25():
    """Seeded rounds of edits kept as a base plus deltas (each with its own vocabulary, rows
    of dropped documents filtered out): the index built from the folded rows equals a fresh
    build bit for bit and scores like rank-bm25 — N, avgdl and df all move each round."""
    tokenize = re.compile(r"\w+").findall
    with CORPUS_2WIKI.open(encoding="utf-8") as fh:
        passages = [json.loads(line) for _, line in zip(range(900), fh, strict=False)]
    texts = [tokenize(f"{p['title']} {p['text']}".lower()) for p in passages]
    rng = random.Random(3)
    live = {f"doc{i:04d}": texts[i] for i in range(400)}
    segments = [dict(live)]  # segment rows, by chunk id
    dropped_after: list[set[str]] = [set()]
    spare = iter(range(400, 900))
    for round_ in range(8):
        gone = set(rng.sample(sorted(live), rng.randint(0, 30)))
        changed = set(rng.sample(sorted(set(live) - gone), rng.randint(0, 10)))
        for c in gone:
            del live[c]
        delta = {c: texts[next(spare)] for c in changed}
        delta.update({f"new{round_}-{i}": texts[next(spare)] for i in range(rng.randint(0, 30))})
        if round_ == 3:
            delta["empty-chunk"] = []  # counts in N and avgdl, holds no term
        live.update(delta)
        for later in dropped_after:
            later.update(gone | changed)
        segments.append(delta)
        dropped_after.append(set())
        pieces = [
            select_rows(part(rows), np.array([c not in drop for c in rows], dtype=bool))
            for rows, drop in zip(segments, dropped_after, strict=True)
        ]
        folded = LexicalIndex.build(merge_terms(pieces))
        fresh = LexicalIndex.build(merge_terms([part(live)]))
        assert_same_index(folded, fresh)
        order = [folded.chunk_ids.index(c) for c in live]
        reference = BM25Okapi(list(live.values()))
        vocab = sorted({t for doc in live.values() for t in doc})
        for query in [rng.sample(vocab, rng.randint(1, 6)) for _ in range(10)]:
            expected = reference.get_scores(query)
            assert np.allclose(folded.scores(query)[order], expected, rtol=1e-9, atol=1e-12)


def test_the_fast_merge_of_canonical_parts_equals_the_general_one(monkeypatch):
    """Segments are canonical, so folding them takes the bisection path; it must give the
    matrix the general remap-and-sort path gives, including dropped and new terms."""
    import graph.lexical as lexical

    general_merge = lexical._merge_general
    calls = []
    monkeypatch.setattr(
        lexical, "_merge_general", lambda parts: calls.append(1) or general_merge(parts)
    )

    rng = random.Random(5)
    words = [f"w{i:03d}" for i in range(300)]
    for trial in range(20):
        docs = {f"d{i:03d}": rng.choices(words[:200], k=rng.randint(0, 12)) for i in range(80)}
        base = merge_terms([part(docs)])
        keep = np.array([rng.random() > 0.1 for _ in base.chunk_ids])
        pieces = [select_rows(base, keep)]
        for j in range(rng.randint(0, 3)):
            extra = {
                f"d{rng.randint(0, 99):03d}x{trial}-{j}-{i}": rng.choices(
                    words, k=rng.randint(0, 8)
                )
                for i in range(rng.randint(0, 6))
            }
            pieces.append(merge_terms([part(extra)]))
        calls.clear()
        fast = merge_terms(pieces)
        assert not calls  # the fast path served it
        general = general_merge(pieces)
        assert fast.chunk_ids == general.chunk_ids and fast.vocabulary == general.vocabulary
        assert (fast.tf != general.tf).nnz == 0 and fast.tf.has_canonical_format
