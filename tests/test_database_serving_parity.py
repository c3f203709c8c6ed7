"""Database serving (Neo4j's own indexes, nothing of the corpus in process) reads what the
in-process engine reads and keeps its recall, on the parity slice of 2WikiMultiHopQA.

Run alone, after the parallel part of `make test` (`exclusive`): database serving reads the
database's one `chunk_embedding` vector index, which the collection being served must hold
at its dimension, and other tests' collections of tiny vectors would hold it at theirs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.database_engine import DatabaseEngine
from app.engine import Engine
from app.services import index_dir
from app.settings import Settings
from graph.errors import NeoragError
from graph.neo4j.store import Neo4jStore
from ingest.identity import document_id, passage_key
from ingest.runner import run_ingest
from tests.conftest import fresh_collection, neo4j_config_from_env, shared_models
from tests.test_backend_parity import _slice

pytestmark = [pytest.mark.slow, pytest.mark.neo4j, pytest.mark.exclusive]


@dataclass
class Served:
    neo4j: Neo4jStore
    settings: Settings
    questions: list[dict]
    corpus: Path


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("served")
    corpus, questions = _slice(tmp)
    settings = Settings(data_dir=tmp / "data", collection=fresh_collection(), backend="neo4j")
    store = Neo4jStore(neo4j_config_from_env(), settings.collection)
    run_ingest(
        corpus,
        store,
        settings.ingest,
        settings.algorithms,
        index_dir(settings),
        models=shared_models(),
    )
    try:
        yield Served(store, settings, questions, corpus)
    finally:
        store.clear()
        store.close()


def _served(pair: Served, tmp_path: Path) -> DatabaseEngine:
    """Database serving of the Neo4j collection, from a data dir with no index files."""
    settings = pair.settings.model_copy(update={"data_dir": tmp_path / "none"})
    engine = DatabaseEngine(settings, store=pair.neo4j)
    assert not (tmp_path / "none").exists()
    return engine


def test_database_serving_reads_what_the_process_holds(pair: Served, tmp_path: Path) -> None:
    served = _served(pair, tmp_path)
    local = Engine(pair.settings, store=pair.neo4j)
    assert len(served.dense) == len(local.dense) and served.dense.dim == local.dense.dim
    same_dense = 0
    for q in pair.questions:
        text = q["question"]
        vector = local.encode_queries([text])[0]
        same_dense += {c for c, _ in served.dense.search(vector, 5)} == {
            c for c, _ in local.dense.search(vector, 5)
        }
        tokens = local.analyzer.tokens(text)
        assert served.known_tokens(tokens) == local.known_tokens(tokens)
        linked = local.links.find(text)
        assert served.links.find(text) == linked
        for doc in linked:
            assert served.links.title[doc] == local.links.title[doc]
            assert served.links.first_chunk.get(doc) == local.links.first_chunk.get(doc)
    assert sum(bool(local.links.find(q["question"])) for q in pair.questions) >= 10
    # HNSW is approximate; on 200 passages it finds FAISS's exact five almost always
    assert same_dense >= 0.9 * len(pair.questions), same_dense


def _recall(engine: Engine | DatabaseEngine, mode: str, pair: Served) -> float:
    """Mean share of each question's gold passages among its first five documents."""
    root, collection = str(pair.corpus.resolve()), engine.settings.collection
    hits = 0.0
    for q in pair.questions:
        docs = engine.retriever(mode).retrieve(q["question"], top_k=5).doc_ranking()[:5]
        gold = {document_id(collection, passage_key(root, g)) for g in q["gold_ids"]}
        hits += len(set(docs) & gold) / len(gold)
    return hits / len(pair.questions)


def test_database_serving_keeps_tigrags_recall(pair: Served, tmp_path: Path) -> None:
    served = _served(pair, tmp_path)
    local = Engine(pair.settings, store=pair.neo4j)
    result = served.retriever("default").retrieve(pair.questions[0]["question"])
    assert result.mode == "tigrag" and result.trace.hops
    for mode in ("tigrag", "hybrid"):
        in_process, database = (_recall(e, mode, pair) for e in (local, served))
        assert in_process > 0.5
        assert database >= in_process - 0.03, (mode, in_process, database)
    with pytest.raises(NeoragError, match="database serving answers"):
        served.retriever("bridge")


def test_database_serving_needs_the_vector_index_at_its_dimension(
    pair: Served, tmp_path: Path
) -> None:
    """Without the index at the collection's dimension it refuses, saying why and what to
    do, instead of answering from vectors of another size."""
    pair.neo4j.write("drop_vector_index")
    settings = pair.settings.model_copy(update={"data_dir": tmp_path / "none"})
    own = Neo4jStore(neo4j_config_from_env(), pair.settings.collection)  # closed on refusal
    try:
        with pytest.raises(NeoragError, match="chunk_embedding at this collection's dimension"):
            DatabaseEngine(settings, store=own)
    finally:
        pair.neo4j._follow_vector_index(384)
    assert _served(pair, tmp_path).dense.dim == 384
