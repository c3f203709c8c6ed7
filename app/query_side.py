"""What both engines (in-process `app/engine.py`, database `app/database_engine.py`) hold
the same way: the embedding model's query side, checked against the collection's vectors,
the collection's index folder and the published version answered from."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from app.services import index_dir
from ingest.model_stamp import EmbeddingModelMismatch
from ingest.query_model import QueryModel, shared_query_model

if TYPE_CHECKING:
    from app.settings import Settings


class QuerySide:
    """Needs `settings`, `store`, `dense` (with `dim` and a length) and `_key`."""

    settings: Settings
    store: Any
    dense: Any
    _key: str | None

    @cached_property
    def query_model(self) -> QueryModel:
        """The embedding model's query side: its ONNX export unless `query_encoder` is
        `torch` (or the model does not export); loading it never imports PyTorch."""
        m = self.settings.ingest.models
        model = shared_query_model(m, torch=self.settings.retrieval.query_encoder == "torch")
        if len(self.dense) and model.dimension != self.dense.dim:
            raise EmbeddingModelMismatch(
                f"collection {self.store.collection!r} holds {self.dense.dim}-dimensional "
                f"vectors but {m.embedding_model} makes {model.dimension}: run "
                "`neorag ingest` on its documents with this model"
            )
        return model

    def encode_queries(self, texts: list[str], *, int8: bool = False) -> np.ndarray:
        """Query-time embeddings (questions, hop expansions, evidence sentences); `int8`
        asks for the int8 export whatever `query_encoder` says, unless that is PyTorch."""
        encoder = self.settings.retrieval.query_encoder
        return self.query_model.encode(texts, int8=int8 or encoder == "onnx-int8")

    @property
    def index_folder(self) -> Path:
        """Where the collection's search-index files are (and what is derived from them)."""
        return index_dir(self.settings)

    @property
    def version(self) -> str | None:
        """The published index this engine answers from: the corpus fingerprint its FAISS
        and BM25 files were built for (an ingest publishes a new one when it finishes)."""
        return self._key
