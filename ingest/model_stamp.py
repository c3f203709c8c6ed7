"""Which embedding model a collection's vectors came from, and keeping them all from one.

A collection's chunk vectors, its FAISS file, its SEMANTIC edges and the Neo4j vector index
live in one model's space. Vectors of two models side by side give wrong neighbours without
a sound when the dimensions agree and break index building when they do not; so do query
vectors of another model. The collection is therefore stamped with the model's identity
(`ingest.embed.model_identity`) and dimension by every ingest that embeds. A change of model
re-indexes every document the ingest scans (the model is part of the config fingerprint);
documents of the collection that came from other paths are re-embedded here from their
stored text, and query time refuses a model other than the stamped one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from graph.base import GraphStore
from graph.errors import NeoragError
from graph.types import ChunkRecord, DocumentRecord, GraphDelta
from ingest.config import IngestConfig, ModelConfig
from ingest.embed import DEFAULT_MODEL, Embedder, embedding_text, model_identity
from ingest.token_graph import cooccurrence_delta

STAMP_KEY = "embedding_model"
_CHANGING = "changing"


class EmbeddingModelMismatch(NeoragError):
    pass


@dataclass(frozen=True, slots=True)
class ModelStamp:
    identity: str
    name: str
    dimension: int


def read_stamp(store: GraphStore) -> ModelStamp | None:
    raw = store.get_meta(STAMP_KEY)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return ModelStamp(str(data["identity"]), str(data["name"]), int(data["dimension"]))
    except (ValueError, KeyError, TypeError):
        return None


def write_stamp(store: GraphStore, embedder: Embedder) -> None:
    stamp = ModelStamp(embedder.identity, embedder.name, embedder.dimension)
    store.set_meta(STAMP_KEY, json.dumps(asdict(stamp), sort_keys=True))


@dataclass(frozen=True, slots=True)
class ModelChange:
    """`changing`: the collection holds vectors of another model than the configured one;
    `stale`: its documents this ingest would not otherwise touch, to re-embed."""

    changing: bool
    stale: list[str]


def plan_model_change(
    store: GraphStore,
    cfg: ModelConfig,
    stored: dict[str, DocumentRecord],
    covered: Iterable[str],
) -> ModelChange:
    """Compare the stamp with the configured model. `covered` are the ids this ingest
    scanned or removes. A collection without a stamp was written before stamps existed,
    with the packaged default model."""
    if not stored:
        return ModelChange(False, [])
    stamp = read_stamp(store)
    recorded = stamp.identity if stamp else DEFAULT_MODEL
    if recorded == model_identity(cfg.embedding_model):
        return ModelChange(False, [])
    return ModelChange(True, sorted(set(stored) - set(covered)))


def mark_changing(store: GraphStore) -> None:
    """Before the first vector of a new model is written: should the ingest die half-way,
    the collection matches no model, so the next ingest (under whichever model) re-embeds
    everything it does not re-index, and queries are refused until then."""
    stamp = ModelStamp(_CHANGING, "an interrupted change of embedding model", 0)
    store.set_meta(STAMP_KEY, json.dumps(asdict(stamp), sort_keys=True))


def reembed_documents(
    store: GraphStore, doc_ids: Sequence[str], cfg: IngestConfig, embedder: Embedder
) -> int:
    """Give the stored chunks of `doc_ids` vectors from `embedder`, keeping every other
    fact they hold (text, tokens, entities, questions), a batch of documents per store
    transaction. Their content hashes stay as they were, so the next ingest of their own
    path re-chunks them under the current configuration. Returns the chunks re-embedded."""
    wanted = set(doc_ids)
    by_doc: dict[str, list[ChunkRecord]] = {}
    for chunk in store.corpus():
        if chunk.doc_id in wanted:
            by_doc.setdefault(chunk.doc_id, []).append(chunk)
    documents = store.documents()
    done = 0
    ordered = sorted(wanted)
    for start in range(0, len(ordered), cfg.batch_documents):
        batch = [d for d in ordered[start : start + cfg.batch_documents] if d in documents]
        tokens = store.chunk_tokens(batch)
        chunks = [c for d in batch for c in by_doc.get(d, [])]
        for chunk in chunks:
            chunk.tokens = tokens.get(chunk.id, ())
        vectors = embedder.encode([embedding_text(c.title, c.section_path, c.text) for c in chunks])
        for chunk, vector in zip(chunks, vectors, strict=True):
            chunk.embedding = vector
        store.apply(
            GraphDelta(
                remove_doc_ids=batch,
                add=[(documents[d], by_doc.get(d, [])) for d in batch],
                cooccurrence=cooccurrence_delta(
                    (c.tokens for c in chunks), tokens.values(), cfg.tokens.cooccurrence_window
                ),
            )
        )
        done += len(chunks)
    return done


def check_query_model(store: GraphStore, cfg: ModelConfig) -> None:
    """Refuse to query a collection with another model than the one that embedded it."""
    stamp = read_stamp(store)
    if stamp is None:
        return
    if stamp.identity == _CHANGING:
        raise EmbeddingModelMismatch(
            f"collection {store.collection!r} was left half-way through a change of "
            "embedding model: run `neorag ingest` again to finish it"
        )
    if model_identity(cfg.embedding_model) != stamp.identity:
        raise EmbeddingModelMismatch(
            f"collection {store.collection!r} was embedded with {stamp.name} "
            f"({stamp.dimension} dims), not the configured {cfg.embedding_model}: run "
            "`neorag ingest` on its documents with this model, or set "
            "NEORAG_INGEST__MODELS__EMBEDDING_MODEL back"
        )
