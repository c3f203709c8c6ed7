"""Exact cosine search over chunk embeddings with FAISS, persisted next to the graph.

Why exact (`IndexFlatIP` on L2-normalised float32): the corpora here are thousands to tens
of thousands of chunks, where a flat scan takes well under a millisecond per query and
gives the true neighbours, so dense baselines and the SEMANTIC edges are not blurred by
approximation error. The index is a cache of vectors the graph store already holds: it is
saved with a caller-chosen key (e.g. graph version + model name) and `load` returns None
when it is missing, damaged or built under another key, so callers simply rebuild.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from graph.lexical import atomic_write

_FORMAT = 1
_INDEX_FILE = "dense.faiss"
_META_FILE = "dense.json"


class DenseIndex:
    """Chunk ids and their unit-length vectors in a flat inner-product index."""

    __slots__ = ("_index", "_position", "ids")

    def __init__(self, ids: list[str], index: faiss.IndexFlatIP) -> None:
        if index.ntotal != len(ids):
            raise ValueError(f"{len(ids)} ids for an index of {index.ntotal} vectors")
        self.ids = ids
        self._index = index
        self._position = {chunk_id: i for i, chunk_id in enumerate(ids)}
        if len(self._position) != len(ids):
            raise ValueError("ids must be unique")

    @classmethod
    def build(cls, ids: list[str], vectors: np.ndarray) -> DenseIndex:
        """Index `vectors` (one row per id); rows are L2-normalised so scores are cosines.

        An empty index needs a (0, dim) array so queries can still be checked against dim.
        """
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2:
            raise ValueError(f"vectors must be 2-D (n, dim), got shape {matrix.shape}")
        if matrix.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids for {matrix.shape[0]} vectors")
        if not np.isfinite(matrix).all():
            raise ValueError("vectors contain NaN or infinity")
        index = faiss.IndexFlatIP(int(matrix.shape[1]))
        if len(ids):
            index.add(_normalise(matrix))
        return cls(list(ids), index)

    # ---- queries -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self._index.d)

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k nearest ids to one query vector, best first, with cosine scores."""
        q = np.asarray(query, dtype=np.float32)
        if q.ndim != 1:
            raise ValueError(f"query must be 1-D, got shape {q.shape}")
        return self.search_many(q[None, :], k)[0]

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """`search` for each row of a (m, dim) array, in one FAISS call."""
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must have shape (m, {self.dim}), got {q.shape}")
        k = min(k, len(self.ids))
        if k <= 0 or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])]
        scores, positions = self._index.search(_normalise(q), k)
        ids = self.ids
        return [
            [(ids[p], float(s)) for p, s in zip(row_p, row_s, strict=True) if p >= 0]
            for row_p, row_s in zip(positions.tolist(), scores.tolist(), strict=True)
        ]

    def vector(self, chunk_id: str) -> np.ndarray:
        """The stored (unit-length) vector of one id; KeyError if unknown."""
        return self._index.reconstruct(self._position[chunk_id])

    def vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of several ids as a (len(ids), dim) array, in the order asked."""
        if not chunk_ids:
            return np.empty((0, self.dim), dtype=np.float32)
        keys = np.fromiter(
            (self._position[c] for c in chunk_ids), dtype=np.int64, count=len(chunk_ids)
        )
        return self._index.reconstruct_batch(keys)

    # ---- persistence -------------------------------------------------------------------
    def save(self, directory: Path, key: str) -> None:
        """Write `dense.faiss` then `dense.json` (ids, key, sha256 of the index) atomically.

        The json goes last and names the index file's hash, so a crash between the two
        writes or a damaged index file makes `load` return None instead of wrong results.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        payload = faiss.serialize_index(self._index).tobytes()
        digest = atomic_write(directory / _INDEX_FILE, lambda fh: fh.write(payload))
        meta = {
            "format": _FORMAT,
            "key": key,
            "dim": self.dim,
            "index_sha256": digest,
            "ids": self.ids,
        }
        text = json.dumps(meta, ensure_ascii=False).encode("utf-8")
        atomic_write(directory / _META_FILE, lambda fh: fh.write(text))

    @classmethod
    def load(cls, directory: Path, key: str) -> DenseIndex | None:
        """The saved index, or None when missing, corrupt, or saved under another key."""
        directory = Path(directory)
        try:
            meta = json.loads((directory / _META_FILE).read_text(encoding="utf-8"))
            if (
                not isinstance(meta, dict)
                or meta.get("format") != _FORMAT
                or meta.get("key") != key
            ):
                return None
            raw = (directory / _INDEX_FILE).read_bytes()
            if hashlib.sha256(raw).hexdigest() != meta["index_sha256"]:
                return None
            index = faiss.deserialize_index(np.frombuffer(raw, dtype=np.uint8))
            if (
                not isinstance(index, faiss.IndexFlatIP)
                or index.d != meta["dim"]
                or index.ntotal != len(meta["ids"])
            ):
                return None
            return cls(list(meta["ids"]), index)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError):
            return None


def _normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (score 0) instead of NaN."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)
