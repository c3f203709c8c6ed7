"""Hold the test database's one `chunk_embedding` vector index at the shipped model's
dimension while the parallel part of `make test` runs (`python -m tests.vector_anchor
hold|release`, called by ops/test.sh).

Tests of several embedding sizes share one database: random corpora of 6-dimensional
vectors, a 96-dimensional tiny model, the shipped 384-dimensional one. The index follows the
dimension of whichever collection writes last unless another collection's chunks use the
dimension it has (graph/neo4j/store_base.py). Without an anchor it changed size whenever one
test's collection emptied and another's wrote, and each change is a schema operation that
waits for every open transaction, so a test that pauses an ingest holding its lock stalled
the database for the others; database serving, which reads the index, met vectors of another
size. The anchor is a collection of one chunk at 384 dimensions, so the index keeps that
size throughout; the exclusive part, which checks the index following a model, runs after
it is released."""

from __future__ import annotations

import sys

import numpy as np

from graph.neo4j.store import Neo4jStore
from graph.types import ChunkRecord, DocumentRecord, GraphDelta
from tests.conftest import neo4j_config_from_env

COLLECTION = "test-vector-anchor"
DIMENSION = 384  # the shipped embedding model's


def hold() -> None:
    with Neo4jStore(neo4j_config_from_env(), COLLECTION) as store:
        store.clear()
        doc = f"{COLLECTION}:doc"
        vector = np.full(DIMENSION, 1.0 / np.sqrt(DIMENSION), dtype=np.float32)
        chunk = ChunkRecord(
            id=f"{doc}#0",
            doc_id=doc,
            ordinal=0,
            title="anchor",
            text="This chunk holds the vector index at the shipped model's dimension.",
            section_path=("anchor",),
            embedding=vector,
            tokens=("anchor",),
        )
        record = DocumentRecord(doc, "/anchor", "anchor", "anchor", 0.0)
        store.apply(GraphDelta(add=[(record, [chunk])]))


def release() -> None:
    with Neo4jStore(neo4j_config_from_env(), COLLECTION) as store:
        store.clear()


if __name__ == "__main__":
    {"hold": hold, "release": release}[sys.argv[1]]()
