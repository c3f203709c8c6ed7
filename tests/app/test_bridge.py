"""The `bridge` mode: name matching, the passage–name walk checked against a dense power
iteration, and retrieval on a small real index whose second hop only a shared name reaches."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from app.engine import Engine, doc_id_of
from app.overrides import with_overrides
from app.retrieval.base import RetrievalResult, TraceStep
from app.retrieval.bridge import BridgeWalk
from app.retrieval.bridge_files import bridge_graph
from app.retrieval.bridge_graph import (
    BridgeGraph,
    NameMatcher,
    normalise_name,
    title_name,
)
from app.retrieval.config import BridgeConfig
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from ingest.runner import run_ingest
from ingest.tokens import Analyzer

# MuSiQue's shape, made small: the question names the film; the answer's passage is about
# another film and shares only the actress's name with the first.
PASSAGES = [
    {
        "id": "film",
        "title": "Miracle on 34th Street",
        "text": "Maureen O'Hara as Doris Walker. John Payne as Fred Gailey. Edmund Gwenn as "
        "Kris Kringle. Natalie Wood as Susan Walker. Porter Hall as Granville Sawyer.",
    },
    {
        "id": "bridge",
        "title": "Five Finger Exercise",
        "text": "The film stars Rosalind Russell and Jack Hawkins, with an early screen "
        "appearance from Lana Wood, the sister of Natalie Wood.",
    },
    {
        "id": "d1",
        "title": "Susan Walker (athlete)",
        "text": "Susan Walker is a retired British sprinter who competed at two Olympic Games.",
    },
    {
        "id": "d2",
        "title": "Macy's Thanksgiving Day Parade",
        "text": "The parade on 34th Street in New York City has been held every year since 1924.",
    },
    {
        "id": "d3",
        "title": "Sibling rivalry",
        "text": "Sibling rivalry is competition among brothers and sisters, often in childhood.",
    },
    {
        "id": "d4",
        "title": "Acting families",
        "text": "Many an actress has a sibling who also acts: sisters who played sisters, "
        "brothers who played brothers.",
    },
    {
        "id": "d5",
        "title": "Christmas films",
        "text": "Christmas films are often remade; the actress who played the girl in one "
        "version may play the mother in the next.",
    },
]
QUESTION = "Who is the sibling of the actress who played Susan Walker in Miracle on 34th Street?"


def test_names_are_normalised() -> None:
    a = Analyzer()
    assert normalise_name(a, "The Beatles") == "beatles"
    assert normalise_name(a, "the") is None
    assert normalise_name(a, "of 11") is None  # nothing searchable
    assert title_name(a, "Capote (film)") == "capote"
    assert title_name(a, "Lothair II") == "lothair ii"


def test_matcher_finds_every_known_name_once_per_place() -> None:
    matcher = NameMatcher({"natalie wood", "wood", "lana wood", "miracle on 34th street"}, 6)
    words = Analyzer().all_words("Lana Wood, the sister of Natalie Wood, in Miracle on 34th Street")
    assert matcher.find(words) == [
        ("lana wood", 0, 2),
        ("wood", 1, 2),
        ("natalie wood", 5, 7),
        ("wood", 6, 7),
        ("miracle on 34th street", 8, 12),
    ]
    assert NameMatcher({"miracle on 34th street"}, 3).find(words) == []  # longer than allowed


def _graph(mentions: list[list[int]], titles: list[tuple[int, int]], n_names: int) -> BridgeGraph:
    rows = [r for r, cols in enumerate(mentions) for _ in cols]
    cols = [c for cs in mentions for c in cs]
    shape = (len(mentions), n_names)
    m = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
    t = sparse.csr_matrix(
        (np.ones(len(titles)), ([r for r, _ in titles], [c for _, c in titles])), shape=shape
    )
    ids = [f"c{i}" for i in range(len(mentions))]
    names = [f"n{j}" for j in range(n_names)]
    return BridgeGraph(
        ids,
        {c: i for i, c in enumerate(ids)},
        names,
        {n: j for j, n in enumerate(names)},
        m,
        t,
        NameMatcher(set(names), 6),
        False,
        {},
        {},
        {},
    )


def _dense_ppr(g: BridgeGraph, rc: np.ndarray, rn: np.ndarray, cfg: BridgeConfig) -> np.ndarray:
    """The same walk as one dense (chunks + names) matrix, for comparison."""
    m = g.mentions.toarray()
    df = m.sum(axis=0)
    w = m / np.sqrt(np.maximum(df, 1))
    out = w.sum(axis=1, keepdims=True)
    c2n = np.divide(w, out, out=np.zeros_like(w), where=out > 0)
    towards = m + cfg.title_boost * g.titles.toarray()
    n2c = towards / towards.sum(axis=0, keepdims=True)
    n, k = m.shape
    walk = np.zeros((n + k, n + k))
    walk[:n, n:] = n2c  # into chunk i from name j
    walk[n:, :n] = c2n.T  # into name j from chunk i
    total = rc.sum() + cfg.name_share * rn.sum()
    r = np.concatenate([rc, cfg.name_share * rn]) / total
    p = r.copy()
    for _ in range(cfg.iterations):
        p = (1 - cfg.damping) * r + cfg.damping * walk @ p
    return p[:n]


def test_walk_matches_a_dense_power_iteration_and_prefers_rare_names() -> None:
    # c0 (the question's passage) names n0 (rare: c0, c1) and n1 (common: c0, c2, c3, c4);
    # n2 titles c5 and c1 names it. c6 is unconnected.
    g = _graph([[0, 1], [0, 2], [1], [1], [1], [2], []], [(5, 2)], 3)
    cfg = BridgeConfig(title_boost=3.0, iterations=20)
    walk = BridgeWalk(g, cfg.title_boost)
    rc = np.array([1.0, 0, 0, 0, 0, 0, 0])
    rn = np.array([0.0, 0.0, 1.0])
    scores = walk.run(rc, rn, cfg)
    np.testing.assert_allclose(scores, _dense_ppr(g, rc, rn, cfg), rtol=1e-5, atol=1e-7)
    assert scores[1] > scores[2]  # the rare name is the stronger bridge
    assert scores[5] > scores[2]  # the question's own name leads to the page it titles
    assert scores[6] == 0.0
    assert walk.run(np.zeros(7), np.zeros(3), cfg).sum() == 0.0


def test_tolerance_trims_only_small_mass_and_zero_is_the_exact_walk() -> None:
    """Above `bounded_above` the push keeps back what a node holds below `tolerance` per
    relationship: scores only fall (every term of the series is non-negative), by little,
    and the ranking's head stays; a graph below it, or tolerance 0, walks exactly."""
    rng = np.random.default_rng(7)
    chunks, names = 400, 150
    # Zipf-like name frequencies: a few hub names in many chunks, most in one or two.
    weights = 1.0 / np.arange(1, names + 1)
    mentions = [
        sorted({i % names} | set(rng.choice(names, rng.integers(1, 6), p=weights / weights.sum())))
        for i in range(chunks)
    ]
    g = _graph(mentions, [(i, i) for i in range(0, names, 3)], names)
    rc = np.zeros(chunks)
    rc[rng.choice(chunks, 12, replace=False)] = rng.random(12)
    rc /= rc.sum()
    rn = np.zeros(names)
    rn[[40, 90]] = 0.5
    exact_cfg = BridgeConfig(tolerance=0.0)
    walk = BridgeWalk(g, exact_cfg.title_boost)
    exact = walk.run(rc, rn, exact_cfg)
    np.testing.assert_allclose(exact, _dense_ppr(g, rc, rn, exact_cfg), rtol=1e-5, atol=1e-9)
    assert walk.run(rc, rn, BridgeConfig(tolerance=1e-5)) == pytest.approx(exact)  # small
    pushed = walk.run(rc, rn, BridgeConfig(tolerance=1e-15, bounded_above=0))
    np.testing.assert_allclose(pushed, exact, rtol=1e-5, atol=1e-9)  # the series, in full
    trimmed = walk.run(rc, rn, BridgeConfig(tolerance=1e-5, bounded_above=0))
    assert np.all(trimmed <= exact + 1e-9)
    assert (exact - trimmed).sum() > 0  # the tolerance did keep some mass back
    assert np.abs(exact - trimmed).max() < 0.01 * exact.max()
    top = set(np.argsort(-exact)[:10])
    assert len(top & set(np.argsort(-trimmed)[:10])) >= 9


def test_title_boost_sends_a_name_to_its_own_page() -> None:
    g = _graph([[0], [0], [0]], [(2, 0)], 1)
    rc = np.array([1.0, 0.0, 0.0])
    flat = BridgeConfig(title_boost=0.0)
    boosted = BridgeConfig(title_boost=3.0)
    s0 = BridgeWalk(g, 0.0).run(rc, np.zeros(1), flat)
    s3 = BridgeWalk(g, 3.0).run(rc, np.zeros(1), boosted)
    assert s0[1] == pytest.approx(s0[2])
    assert s3[2] > 2 * s3[1]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    tmp = tmp_path_factory.mktemp("bridge")
    corpus = tmp / "docs" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES), encoding="utf-8")
    settings = Settings(data_dir=tmp / "data")
    with EmbeddedStore(store_path(settings)) as store:
        run_ingest(corpus.parent, store, settings.ingest, settings.algorithms, index_dir(settings))
    e = Engine(settings)
    yield e
    e.close()


def _doc_ids(engine: Engine, doc: str) -> str:
    return next(d for d in engine.store.documents() if d.endswith(doc) or d == doc)


def test_graph_links_every_mention_of_a_known_name(engine: Engine) -> None:
    g = bridge_graph(engine, 6, False)
    wood = g.name_index["natalie wood"]
    linked = {g.chunk_ids[i] for i in g.mentions[:, wood].nonzero()[0]}
    docs = {_doc_ids(engine, "film"), _doc_ids(engine, "bridge")}
    assert {d for d in docs if any(c.startswith(d + "#") for c in linked)} == docs
    assert all(any(c.startswith(d + "#") for d in docs) for c in linked)
    assert bridge_graph(engine, 6, False) is g  # built once per published index
    found = {g.names[j] for j in g.names_in(engine.analyzer, QUESTION)}
    assert {"susan walker", "miracle on 34th street"} <= found
    words = " ".join(engine.analyzer.all_words(QUESTION))
    assert all(f" {n} " in f" {words} " for n in found)


def test_every_snapshot_of_an_engine_shares_its_bridge_graph(engine: Engine) -> None:
    """The service retrieves through a snapshot per request: a graph cached per snapshot
    was rebuilt (seconds, under a lock) for every request."""
    g = bridge_graph(engine, 6, False)
    first, second = engine.snapshot(), engine.snapshot()
    assert bridge_graph(first, 6, False) is g and bridge_graph(second, 6, False) is g
    assert bridge_graph(first, 5, False) is not g  # other parameters, another graph
    assert bridge_graph(second, 5, False) is bridge_graph(first, 5, False)


def test_bridge_reaches_the_passage_only_a_shared_name_links(engine: Engine) -> None:
    dense = engine.retriever("dense").retrieve(QUESTION).doc_ranking()
    bridge = engine.retriever("bridge").retrieve(QUESTION)
    ranking = bridge.doc_ranking()
    film, second = _doc_ids(engine, "film"), _doc_ids(engine, "bridge")
    assert ranking[0] == film
    assert ranking.index(second) < dense.index(second)
    for distractor in ("d4", "d5"):  # close in meaning, no name shared with the cast list
        assert ranking.index(second) < ranking.index(_doc_ids(engine, distractor))
    steps = [s.name for s in bridge.trace.steps]
    assert {"dense restart", "question names", "bridge ppr"} <= set(steps)


def test_default_fuses_the_configured_parts(engine: Engine) -> None:
    result = engine.retriever("default").retrieve(QUESTION)
    fusion = next(s for s in result.trace.steps if s.name == "fusion")
    assert fusion.details["parts"] == list(engine.settings.retrieval.default_parts)
    only = with_overrides(engine.settings, {"retrieval.default_parts": ["bridge"]})
    e = Engine(only, store=engine.store)
    alone = e.retriever("bridge").retrieve(QUESTION).doc_ranking()
    assert e.retriever("default").retrieve(QUESTION).doc_ranking() == alone


def test_parts_must_be_fusable_modes() -> None:
    with pytest.raises(ValueError):
        Settings(retrieval={"default_parts": ["dense"]})
    with pytest.raises(ValueError):
        Settings(retrieval={"default_parts": []})


def _fusion(result: RetrievalResult) -> TraceStep:
    """The default's own fusion step (the last: hybrid, a part, has one of its own)."""
    return [s for s in result.trace.steps if s.name == "fusion"][-1]


def _chunks_per_document(engine: Engine) -> float:
    """The collection's average: what the passage match was once decided from."""
    sizes = engine.document_sizes()
    return sum(sizes.values()) / len(sizes)


def test_passage_match_joins_only_on_long_documents(engine: Engine) -> None:
    """One passage per document (this corpus): the parts as configured. Forced on, or a
    threshold at the reached documents' length: hybrid joins, and the trace says so."""
    assert _chunks_per_document(engine) < engine.settings.retrieval.passage_match_chunks
    assert "hybrid" not in _fusion(engine.retriever("default").retrieve(QUESTION)).details["parts"]
    for override in (
        {"retrieval.passage_match": "on"},
        {"retrieval.passage_match_chunks": 1.0},
    ):
        e = Engine(with_overrides(engine.settings, override), store=engine.store)
        result = e.retriever("default").retrieve(QUESTION)
        assert _fusion(result).details["parts"][-1] == "hybrid"
        assert any("passage match" in n for n in result.trace.notes)
        # with the passage match, TIGRAG's vote counts at the configured factor
        assert _fusion(result).details["weights"] == {"tigrag": 0.5}
    plain = _fusion(engine.retriever("default").retrieve(QUESTION))
    assert plain.details["weights"] == {}
    even = {"retrieval.passage_match": "on", "retrieval.passage_match_weights": {}}
    e = Engine(with_overrides(engine.settings, even), store=engine.store)
    assert _fusion(e.retriever("default").retrieve(QUESTION)).details["weights"] == {}
    off = {"retrieval.passage_match": "off", "retrieval.passage_match_chunks": 0.1}
    e = Engine(with_overrides(engine.settings, off), store=engine.store)
    assert "hybrid" not in _fusion(e.retriever("default").retrieve(QUESTION)).details["parts"]


LONG_PAGE_WORDS = "the writer thread copies pages from the log into the database file"


def test_long_pages_get_the_passage_match(tmp_path: Path) -> None:
    """A collection mixing long pages with one-paragraph notes: a question reaching the
    pages gets the passage match, one reaching the notes does not (decided per question,
    not from the collection's average)."""
    words = LONG_PAGE_WORDS.split()
    pages = tmp_path / "pages"
    pages.mkdir()
    for n, topic in enumerate(("Checkpoints", "Journal modes")):
        sections = [
            f"## {topic} part {i}\n\n" + " ".join(words[(i + j) % len(words)] for j in range(160))
            for i in range(14)
        ]
        (pages / f"page{n}.md").write_text(f"# {topic}\n\n" + "\n\n".join(sections) + "\n")
    for n, person in enumerate(PEOPLE):
        (pages / f"note{n}.md").write_text(
            f"# {person}\n\n{person} starred in a film shot near {PLACES[n % len(PLACES)]}.\n"
        )
    settings = Settings(data_dir=tmp_path / "data")
    with EmbeddedStore(store_path(settings)) as store:
        run_ingest(pages, store, settings.ingest, settings.algorithms, index_dir(settings))
    e = Engine(settings)
    try:
        assert _chunks_per_document(e) < settings.retrieval.passage_match_chunks
        default = e.retriever("default")
        question = "when does the writer copy pages into the file?"
        result = default.retrieve(question)
        assert _fusion(result).details["parts"] == [*settings.retrieval.default_parts, "hybrid"]
        assert any("passage match" in n for n in result.trace.notes)
        evidence = settings.retrieval.passage_match_page_evidence
        assert _fusion(result).details["page_evidence"] == evidence > 0
        assert all(s.signals["page"] > 0 for s in result.ranking)  # every page was voted for
        # One page holds at most ⌈share · top_k⌉ of the first top_k chunks; without that
        # limit the better page's passages fill more of them. Page order is the same.
        k = settings.retrieval.top_k
        limit = math.ceil(settings.retrieval.passage_match_page_share * k)
        unlimited = Engine(
            with_overrides(settings, {"retrieval.passage_match_page_share": 1.0}), store=e.store
        ).retriever("default")
        whole = unlimited.retrieve(question)
        assert _most_chunks_of_one_document(whole, k) > limit
        assert _most_chunks_of_one_document(result, k) == limit
        assert result.doc_ranking() == whole.doc_ranking()
        # The pages' order is the fusion's; within the first page, hybrid picks the passage.
        hybrid = [s.chunk_id for s in e.retriever("hybrid").retrieve(question).ranking]
        first_page = doc_id_of(result.ranking[0].chunk_id)
        assert result.ranking[0].chunk_id == next(c for c in hybrid if doc_id_of(c) == first_page)
        fused_only = Engine(
            with_overrides(settings, {"retrieval.passage_match_within_page": False}),
            store=e.store,
        ).retriever("default")
        by_fusion = fused_only.retrieve(question)
        assert by_fusion.doc_ranking() == result.doc_ranking()
        assert [c.chunk_id for c in by_fusion.ranking[:k]] != [
            c.chunk_id for c in result.ranking[:k]
        ]  # it acted here
        result = default.retrieve("Which film did Clara Bow star in near Port Veldt?")
        assert _fusion(result).details["parts"] == list(settings.retrieval.default_parts)
        assert _fusion(result).details["page_evidence"] == 0
        assert not any("page" in s.signals for s in result.ranking)
    finally:
        e.close()


def _most_chunks_of_one_document(result: RetrievalResult, k: int) -> int:
    return max(Counter(doc_id_of(c.chunk_id) for c in result.ranking[:k]).values())


PEOPLE = ["Natalie Wood", "Lana Wood", "Maureen O'Hara", "Edmund Gwenn", "John Payne",
          "Rosalind Russell", "Jack Hawkins", "Porter Hall", "Clara Bow", "Ida Lupino"]  # fmt: skip
PLACES = ["Amber Sea", "Mount Kell", "Port Veldt", "Grey Range", "Silverrun", "New York City"]


def _random_corpus(rng: np.random.Generator, n: int, start: int = 0) -> dict[str, dict]:
    """Passages naming people and places, some titled by a name others mention."""
    out = {}
    for k in range(start, start + n):
        who = rng.choice(PEOPLE, 3, replace=False)
        where = rng.choice(PLACES, 2, replace=False)
        title = str(rng.choice(PEOPLE + PLACES)) if rng.random() < 0.5 else f"Film {k}"
        text = (
            f"{who[0]} met {who[1]} near {where[0]} in {1900 + k}. Later {who[2]} travelled "
            f"to {where[1]}; the {where[0].lower()} was calm. Film {k + 1} starred {who[1]}."
        )
        out[f"p{k}"] = {"id": f"p{k}", "title": title, "text": text}
    return out


def _same_graph(a: BridgeGraph, b: BridgeGraph) -> None:
    assert a.chunk_ids == b.chunk_ids and a.names == b.names
    for m in ("mentions", "titles"):  # the same arrays: the walk runs the same sums
        x, y = getattr(a, m), getattr(b, m)
        for part in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(x, part), getattr(y, part), err_msg=m)
    assert a.state.gives == b.state.gives and a.state.givers == b.state.givers
    assert a.state.doc_titles == b.state.doc_titles


@pytest.mark.parametrize("capitalised", [True, False])
def test_an_updated_graph_equals_a_fresh_build(tmp_path: Path, capitalised: bool) -> None:
    """After random additions, removals, text and title changes, the graph derived from
    the previous version's equals the one built from every chunk, and reads only the
    chunks that changed."""
    from app.retrieval.bridge_graph import build_bridge_graph, update_bridge_graph

    rng = np.random.default_rng(7 if capitalised else 8)
    docs = _random_corpus(rng, 80)
    docs["pq"] = {"id": "pq", "title": "Kelp Stew", "text": "Kelp stew is a broth of seaweed."}
    for k in ("p1", "p2"):  # a title the NER model does not tag in this sentence
        docs[k] = {**docs[k], "text": docs[k]["text"] + " They ate Kelp Stew at noon."}
    folder = tmp_path / "docs"
    folder.mkdir()
    settings = Settings(backend="embedded", data_dir=tmp_path / "data", collection="bridge")
    store = EmbeddedStore(store_path(settings))

    def ingest() -> None:
        (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs.values()))
        run_ingest(folder, store, settings.ingest, settings.algorithms, index_dir(settings))

    ingest()
    engine = Engine(settings, store=store)
    try:
        graph = bridge_graph(engine, 6, capitalised)
        for round_ in range(4):
            keys = sorted(set(docs) - {"pq", "p1", "p2"})
            for k in rng.choice(keys, 2, replace=False):  # removed
                del docs[str(k)]
            docs.update(_random_corpus(rng, 3, start=100 + 10 * round_))  # added
            k = str(rng.choice(sorted(docs)))
            docs[k] = {**docs[k], "text": docs[k]["text"] + " Clara Bow sang at Grey Range."}
            k = str(rng.choice(sorted(set(docs) - {"pq"})))
            docs[k] = {**docs[k], "title": "Lana Wood" if docs[k]["title"] != "Lana Wood" else "X"}
            if round_ == 3:  # a name no chunk gives any more, still in kept chunks' text
                del docs["pq"]
            ingest()
            assert engine.refresh()
            read: list[int] = []
            real_get = store.get_chunks

            def counting(ids, _real=real_get, _read=read):  # type: ignore[no-untyped-def]
                _read.append(len(ids))
                return _real(ids)

            store.get_chunks = counting  # type: ignore[method-assign]
            try:
                updated = update_bridge_graph(graph, engine, 6)
            finally:
                store.get_chunks = real_get  # type: ignore[method-assign]
            fresh = build_bridge_graph(engine, 6, capitalised)
            _same_graph(updated, fresh)
            assert sum(read) < len(fresh.chunk_ids)  # not every chunk was read again
            assert bridge_graph(engine, 6, capitalised).names == fresh.names
            if round_ == 3:  # the gone name left kept chunks too
                assert "kelp stew" in graph.names and "kelp stew" not in fresh.names
            graph = updated
    finally:
        engine.close()


def _same_graph(a: BridgeGraph, b: BridgeGraph) -> None:
    assert a.chunk_ids == b.chunk_ids and a.names == b.names
    for got, want in ((a.mentions, b.mentions), (a.titles, b.titles)):
        assert (got != want).nnz == 0 and got.has_sorted_indices
        assert np.array_equal(got.indptr, want.indptr)
        assert np.array_equal(got.indices, want.indices)
    assert a.state.gives == b.state.gives and dict(a.state.givers) == dict(b.state.givers)
    assert a.state.doc_titles == b.state.doc_titles and a.capitalised == b.capitalised
    assert a.matcher.names == b.matcher.names and a.matcher._prefixes == b.matcher._prefixes


def test_a_started_engine_loads_the_kept_graph_instead_of_building_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.retrieval import bridge_files
    from app.retrieval import bridge_graph as module

    built = bridge_graph(engine, 6, False)
    path = bridge_files.graph_file(engine.index_folder, 6, False)
    assert path.is_file()

    def refuse(*args: object, **kwargs: object) -> BridgeGraph:
        raise AssertionError("the graph was built again")

    monkeypatch.setattr(module, "build_bridge_graph", refuse)
    monkeypatch.setattr(module, "update_bridge_graph", refuse)
    started = Engine(engine.settings)  # a new process's engine: nothing derived in memory
    try:
        _same_graph(bridge_graph(started, 6, False), built)
        want = engine.retriever("bridge").retrieve(QUESTION).ranking
        got = started.retriever("bridge").retrieve(QUESTION).ranking
        assert [(s.chunk_id, round(s.score, 9)) for s in got] == [
            (s.chunk_id, round(s.score, 9)) for s in want
        ]
    finally:
        started.close()


def test_a_kept_graph_of_another_version_is_derived_from_or_ignored_when_unreadable(
    engine: Engine, tmp_path: Path
) -> None:
    from app.retrieval import bridge_files

    fresh = bridge_graph(engine, 6, False)
    path = bridge_files.graph_file(engine.index_folder, 6, False)
    bridge_files.save_graph(path, fresh, "an earlier version", 6)
    started = Engine(engine.settings)
    try:  # derived from the kept graph by what changed (nothing): equal to a fresh build
        _same_graph(bridge_graph(started, 6, False), fresh)
        assert bridge_files.load_graph(path, 6, False)[0] == engine.version  # kept anew
    finally:
        started.close()
    path.write_bytes(b"not a graph")
    assert bridge_files.load_graph(path, 6, False) is None
    assert bridge_files.load_graph(tmp_path / "missing.npz", 6, False) is None
    started = Engine(engine.settings)
    try:
        _same_graph(bridge_graph(started, 6, False), fresh)
    finally:
        started.close()
