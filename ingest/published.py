"""Which version of a collection's search indexes is published: the fingerprint of the
corpus and edge configuration they were built for, kept in the store's meta under
DERIVED_KEY. An ingest sets it when it finishes; query processes read it to load (or
rebuild) the matching FAISS and BM25 files. Kept apart from the ingest runner, so a process
that only answers questions does not import the ingest pipeline."""

from __future__ import annotations

import hashlib
import json

from graph.types import DocumentRecord
from ingest.config import IngestConfig
from ingest.edges.model import EDGE_BUILDER_VERSION

DERIVED_KEY = "derived_for"


def corpus_fingerprint(docs: dict[str, DocumentRecord], cfg: IngestConfig) -> str:
    h = hashlib.sha256()
    for doc_id in sorted(docs):
        h.update(f"{doc_id}\0{docs[doc_id].content_hash}\n".encode())
    h.update(json.dumps(cfg.edges.model_dump(mode="json"), sort_keys=True).encode())
    h.update(f"edges-v{EDGE_BUILDER_VERSION}".encode())
    return h.hexdigest()[:24]
