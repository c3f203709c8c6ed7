"""The two backends agree on a real slice of 2WikiMultiHopQA: token PPR (GDS vs in-process),
Leiden modularity, FastRP/spectral vectors, determinism, and retrieval top-5. Database
serving against the in-process engine is tests/test_database_serving_parity.py."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app.engine import Engine
from app.retrieval.bridge_files import bridge_graph
from app.retrieval.hop_table import build_hop_table, hop_reads
from app.services import index_dir, store_path
from app.settings import Settings
from graph.embedded.store import EmbeddedStore
from graph.neo4j.store import Neo4jStore
from ingest.runner import run_ingest
from ingest.tokens import Analyzer
from tests.conftest import DATASETS, fresh_collection, neo4j_config_from_env, shared_models

pytestmark = [pytest.mark.slow, pytest.mark.neo4j]
PASSAGES = 200  # 22 of the questions have all their gold passages in the slice


@dataclass
class Pair:
    embedded: EmbeddedStore
    neo4j: Neo4jStore
    settings: dict[str, Settings]
    questions: list[dict]
    corpus: Path


def _slice(tmp: Path) -> tuple[Path, list[dict]]:
    src = DATASETS / "2wiki-dev"
    lines = (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:PASSAGES]
    ids = {json.loads(line)["id"] for line in lines}
    questions = [
        q
        for q in map(json.loads, (src / "questions.jsonl").read_text().splitlines())
        if set(q["gold_ids"]) <= ids
    ]
    path = tmp / "slice" / "corpus.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, questions


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    tmp = tmp_path_factory.mktemp("parity")
    corpus, questions = _slice(tmp)
    base = Settings(data_dir=tmp / "data", collection=fresh_collection())
    settings = {
        "embedded": base.model_copy(update={"backend": "embedded"}),
        "neo4j": base.model_copy(update={"backend": "neo4j"}),
    }
    models = shared_models()
    embedded = EmbeddedStore(store_path(settings["embedded"]), base.collection)
    neo4j = Neo4jStore(neo4j_config_from_env(), base.collection)
    for name, store in (("embedded", embedded), ("neo4j", neo4j)):
        run_ingest(
            corpus, store, base.ingest, base.algorithms, index_dir(settings[name]), models=models
        )
    try:
        yield Pair(embedded, neo4j, settings, questions, corpus)
    finally:
        neo4j.clear()
        neo4j.close()
        embedded.close()


def _seeds(pair: Pair) -> list[dict[str, float]]:
    analyzer = Analyzer()
    vocab = set(pair.embedded.snapshot().tokens)
    out = []
    for q in pair.questions[:25]:
        seeds = {t: 1.0 for t in analyzer.tokens(q["question"]) if t in vocab}
        if seeds:
            out.append(seeds)
    return out


def test_token_ppr_agrees(pair: Pair) -> None:
    cfg = pair.settings["embedded"].algorithms
    overlaps, l1s = [], []
    for seeds in _seeds(pair):
        a = pair.embedded.token_ppr(seeds, cfg, top_k=500)
        b = pair.neo4j.token_ppr(seeds, cfg, top_k=500)
        top_a = sorted(a, key=lambda t: (-a[t], t))[:20]
        top_b = sorted(b, key=lambda t: (-b[t], t))[:20]
        overlaps.append(len(set(top_a) & set(top_b)) / 20)
        keys = set(a) | set(b)
        na, nb = sum(a.values()), sum(b.values())
        l1s.append(sum(abs(a.get(k, 0) / na - b.get(k, 0) / nb) for k in keys))
    assert len(overlaps) >= 15
    assert min(overlaps) >= 0.9, overlaps
    assert max(l1s) < 0.05, l1s


def test_leiden_modularity_and_vectors(pair: Pair) -> None:
    cfg = pair.settings["embedded"].algorithms
    e_report = pair.embedded.run_analytics(cfg)
    n_report = pair.neo4j.run_analytics(cfg)
    assert e_report.communities > 1 and n_report.communities > 1
    assert abs(e_report.modularity - n_report.modularity) <= 0.02, (
        e_report.modularity,
        n_report.modularity,
    )
    for store in (pair.embedded, pair.neo4j):
        for prop, dim in (("fastrp", cfg.fastrp_dimension), ("spectral", cfg.spectral_dimension)):
            vectors = store.chunk_vectors(prop)
            assert len(vectors) == store.status().chunks
            assert all(v.shape == (dim,) and np.all(np.isfinite(v)) for v in vectors.values())
        assert store.status().communities >= 2
        assert all(c.top_tokens for c in store.communities() if c.size > 2)


def test_each_backend_is_deterministic(pair: Pair) -> None:
    cfg = pair.settings["embedded"].algorithms
    for store in (pair.embedded, pair.neo4j):
        store.run_analytics(cfg)
        first = {c.id: c.community for c in store.get_chunks(sorted(store.chunk_vectors("fastrp")))}
        spectral = store.chunk_vectors("spectral")
        store.run_analytics(cfg)
        second = {c.id: c.community for c in store.get_chunks(sorted(first))}
        assert first == second
        again = store.chunk_vectors("spectral")
        assert all(np.allclose(spectral[k], again[k], atol=1e-5) for k in spectral)


def test_backends_return_the_same_top5(pair: Pair) -> None:
    engines = {
        "embedded": Engine(pair.settings["embedded"], store=pair.embedded),
        "neo4j": Engine(pair.settings["neo4j"], store=pair.neo4j),
    }
    same = 0
    for q in pair.questions:
        tops = [
            [s.chunk_id for s in e.retriever("tigrag").retrieve(q["question"], top_k=5).ranking[:5]]
            for e in engines.values()
        ]
        same += set(tops[0]) == set(tops[1])
    assert len(pair.questions) >= 20
    assert same / len(pair.questions) >= 0.9, f"{same}/{len(pair.questions)}"


def test_bridge_graph_is_the_same_on_both_backends(pair: Pair) -> None:
    """The bridge walk's graph comes from the store interface: both stores give one graph."""
    engines = [
        Engine(pair.settings["embedded"], store=pair.embedded),
        Engine(pair.settings["neo4j"], store=pair.neo4j),
    ]
    cfg = engines[0].settings.retrieval.bridge
    graphs = [bridge_graph(e, cfg.max_name_words, cfg.capitalised) for e in engines]
    assert len(graphs[0].names) > 100
    assert graphs[0].chunk_ids == graphs[1].chunk_ids
    assert graphs[0].names == graphs[1].names
    assert (graphs[0].mentions != graphs[1].mentions).nnz == 0
    assert (graphs[0].titles != graphs[1].titles).nnz == 0


def test_backends_return_the_same_default_top5(pair: Pair) -> None:
    engines = [
        Engine(pair.settings["embedded"], store=pair.embedded),
        Engine(pair.settings["neo4j"], store=pair.neo4j),
    ]
    same = 0
    for q in pair.questions:
        tops = [
            [s.chunk_id for s in e.retriever("default").retrieve(q["question"]).ranking[:5]]
            for e in engines
        ]
        same += tops[0] == tops[1]
    assert same / len(pair.questions) >= 0.9, f"{same}/{len(pair.questions)}"


def test_hop_table_answers_what_the_store_would(pair: Pair) -> None:
    """TIGRAG's hops on Neo4j read an in-process table; it holds exactly the store's reads,
    and the rankings do not depend on which of the two served them."""
    engine = Engine(pair.settings["neo4j"], store=pair.neo4j)
    ids = list(engine.dense.ids)
    table = build_hop_table(pair.neo4j, ids)
    assert sum(map(len, table.mentions.values())) > 500
    assert sum(map(len, table.cites.values())) > 0
    rng = random.Random(11)
    for size in (1, 2, 3, 5, 8) * 8:
        subset = rng.sample(ids, size)
        subset.append(subset[0])
        edges, mentions = table.lookup(subset)
        want_edges, want_mentions = pair.neo4j.citations_and_mentions(subset)
        assert sorted(edges, key=_edge_key) == sorted(want_edges, key=_edge_key)
        assert mentions == want_mentions

    def tigrag(engine: Engine) -> tuple[list[list[tuple[str, float]]], set[str]]:
        rankings, reads = [], set()
        for q in pair.questions[:25]:
            result = engine.retriever("tigrag").retrieve(q["question"], top_k=5)
            rankings.append([(s.chunk_id, round(s.score, 9)) for s in result.ranking[:5]])
            reads |= {s.details["reads"] for s in result.trace.steps if "reads" in s.details}
        return rankings, reads

    copied = hop_reads(engine)
    assert copied is not None and copied.wait(120), copied and copied.failed
    from_table, table_reads = tigrag(engine)
    pair.neo4j.remote = False  # type: ignore[misc]  # this store's hops read the server
    try:
        from_store, store_reads = tigrag(Engine(pair.settings["neo4j"], store=pair.neo4j))
    finally:
        del pair.neo4j.remote
    assert (table_reads, store_reads) == ({"table"}, {"store"})
    assert from_table == from_store


def _edge_key(e: object) -> tuple[str, str, str, float]:
    return (e.kind, e.src, e.dst, e.weight)  # type: ignore[attr-defined]
