"""Cosine search over chunk embeddings with FAISS: exact below a size threshold, IVF above.

Why exact first (`IndexFlatIP` on L2-normalised float32): up to tens of thousands of chunks
a flat scan takes about a millisecond per query and gives the true neighbours, so dense
baselines and SEMANTIC edges are not blurred by approximation error. Above
`SearchIndexConfig.approximate_above` chunks the index is IVF-Flat: spherical k-means
cells, a query scans the `ivf_nprobe` nearest cells and scores their vectors exactly.
IVF is chosen over HNSW because it removes vectors by id (HNSW in FAISS cannot), so an
update costs the change rather than a rebuild (bench/out/findings/ann-200k.json measured both).

Ids are kept in sorted order and the flat index stores its vectors in that order, so an
index brought up to date with `apply` is the same index a fresh `build` gives, positions,
scores and tie order included. The IVF index labels vectors with int64 ids of its own
(`labels`), which is what lets FAISS add and remove them in place.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from math import isqrt
from pathlib import Path

import faiss
import numpy as np

from graph.config import SearchIndexConfig

FLAT = "flat"
IVF = "ivf"


class DenseIndex:
    """Chunk ids and their unit-length vectors in an inner-product FAISS index."""

    __slots__ = ("_by_label", "_index", "_label", "ids", "kind", "trained_size")

    def __init__(
        self,
        index: faiss.Index,
        labels: dict[str, int],
        *,
        trained_size: int = 0,
        sorted_ids: list[str] | None = None,
    ) -> None:
        """`labels` maps each chunk id to its FAISS id; for a flat index these must be the
        positions 0..n-1 in sorted-id order (what `build` produces), and `sorted_ids` may
        pass that order in (the labels are then its positions, unchecked)."""
        if index.ntotal != len(labels):
            raise ValueError(f"{len(labels)} ids for an index of {index.ntotal} vectors")
        self._index = index
        self._label = labels
        self.kind = IVF if isinstance(index, faiss.IndexIVF) else FLAT
        self.trained_size = trained_size
        if sorted_ids is not None and self.kind == FLAT:
            self.ids = sorted_ids
            self._by_label: list[str | None] = sorted_ids  # type: ignore[assignment]
            return
        self.ids = sorted(labels)
        top = max(labels.values(), default=-1)
        by_label: list[str | None] = [None] * (top + 1)
        for chunk_id, label in labels.items():
            by_label[label] = chunk_id
        self._by_label = by_label
        if self.kind == FLAT and any(labels[c] != i for i, c in enumerate(self.ids)):
            raise ValueError("a flat index must hold its vectors in sorted-id order")

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def build(
        cls, ids: Sequence[str], vectors: np.ndarray, config: SearchIndexConfig | None = None
    ) -> DenseIndex:
        """Index `vectors` (one row per id); rows are L2-normalised so scores are cosines.

        An empty index needs a (0, dim) array so queries can still be checked against dim.
        """
        config = config or SearchIndexConfig()
        matrix = _checked(ids, vectors)
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique")
        order = sorted(range(len(ids)), key=ids.__getitem__)
        sorted_ids = [ids[i] for i in order]
        unit = _normalise(matrix[order]) if len(ids) else matrix
        if len(ids) > config.approximate_above:
            return cls._ivf(sorted_ids, unit, config)
        return cls._flat(sorted_ids, unit)

    @classmethod
    def _flat(cls, sorted_ids: list[str], unit: np.ndarray) -> DenseIndex:
        index = faiss.IndexFlatIP(int(unit.shape[1]))
        if len(sorted_ids):
            index.add(np.ascontiguousarray(unit, dtype=np.float32))
        labels = dict(zip(sorted_ids, range(len(sorted_ids)), strict=True))
        return cls(index, labels, sorted_ids=sorted_ids)

    @classmethod
    def _ivf(cls, ids: list[str], unit: np.ndarray, config: SearchIndexConfig) -> DenseIndex:
        n, dim = unit.shape
        nlist = config.ivf_nlist or max(1, 4 * isqrt(n))
        nlist = max(1, min(nlist, n // 39 or 1))  # FAISS wants ≥ 39 training points a cell
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.spherical = True
        index.train(_training_sample(unit, nlist))
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct + remove by id
        index.nprobe = config.ivf_nprobe
        labels = np.arange(n, dtype=np.int64)
        index.add_with_ids(unit, labels)
        return cls(index, {c: i for i, c in enumerate(ids)}, trained_size=n)

    def apply(
        self,
        removed: Iterable[str],
        added_ids: Sequence[str],
        added_vectors: np.ndarray,
    ) -> None:
        """Remove `removed` (unknown ids are ignored), then add the new vectors, in place.

        An index being searched by another thread must not be updated: loaders build a
        new object and switch to it. Added rows are normalised exactly as `build` does,
        so the result equals a fresh build over the same vectors.
        """
        matrix = _checked(added_ids, added_vectors, dim=self.dim)
        gone = [c for c in dict.fromkeys(removed) if c in self._label]
        gone_set = set(gone)
        clash = [c for c in added_ids if c in self._label and c not in gone_set]
        if clash or len(set(added_ids)) != len(added_ids):
            raise ValueError(f"ids already indexed: {sorted(set(clash))[:5]}")
        unit = _normalise(matrix) if len(added_ids) else matrix
        if self.kind == FLAT:
            self._adopt(DenseIndex._flat_merged(self.ids, self._rows(), gone_set, added_ids, unit))
            return
        if gone:
            doomed = np.fromiter((self._label[c] for c in gone), np.int64, len(gone))
            self._index.remove_ids(faiss.IDSelectorArray(len(doomed), faiss.swig_ptr(doomed)))
        labels = dict(self._label)
        for c in gone:
            del labels[c]
        start = len(self._by_label)
        if len(added_ids):
            new = np.arange(start, start + len(added_ids), dtype=np.int64)
            self._index.add_with_ids(unit, new)
            labels.update(zip(added_ids, new.tolist(), strict=True))
        self._adopt(DenseIndex(self._index, labels, trained_size=self.trained_size))

    @classmethod
    def _flat_merged(
        cls,
        ids: list[str],
        rows: np.ndarray,
        gone: set[str],
        added_ids: Sequence[str],
        added: np.ndarray,
    ) -> DenseIndex:
        """A flat index over the sorted `ids` (unit `rows`) minus `gone`, plus the unit
        `added` rows, in sorted-id order. The survivors are copied as contiguous runs
        between the few places a change touches, so a small change costs one memcpy of
        the rows rather than a gather or a sort."""
        dim = rows.shape[1] if len(ids) else added.shape[1]
        order = sorted(range(len(added_ids)), key=added_ids.__getitem__)
        new_ids = [added_ids[i] for i in order]
        new_rows = added[order] if len(order) else added
        # Cut points in `ids`: removed positions (skip one row) and insertion points.
        cuts = sorted(
            [(bisect_left(ids, c), 1, 0) for c in gone]
            + [(bisect_left(ids, c), 0, k) for k, c in enumerate(new_ids)]
        )
        n_out = len(ids) - len(gone) + len(new_ids)
        out = np.empty((n_out, dim), dtype=np.float32)
        out_ids: list[str] = []
        src = dst = 0
        for position, is_removal, k in cuts:
            run = position - src
            if run > 0:
                out[dst : dst + run] = rows[src:position]
                out_ids += ids[src:position]
                dst, src = dst + run, position
            if is_removal:
                src += 1
            else:
                out[dst] = new_rows[k]
                out_ids.append(new_ids[k])
                dst += 1
        out[dst:] = rows[src:]
        out_ids += ids[src:]
        return cls._flat(out_ids, out)

    def _rows(self) -> np.ndarray:
        """The flat index's stored rows as a view (no copy): valid while the index lives."""
        n, d = len(self.ids), self.dim
        if not n:
            return np.empty((0, d), dtype=np.float32)
        return faiss.rev_swig_ptr(self._index.get_xb(), n * d).reshape(n, d)

    def _adopt(self, other: DenseIndex) -> None:
        for name in DenseIndex.__slots__:
            setattr(self, name, getattr(other, name))

    # ---- queries -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._label

    @property
    def dim(self) -> int:
        return int(self._index.d)

    @property
    def nprobe(self) -> int:
        """IVF cells scanned per query (0 for an exact index)."""
        return int(self._index.nprobe) if self.kind == IVF else 0

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if self.kind == IVF:
            self._index.nprobe = max(1, int(value))

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k nearest ids to one query vector, best first, with cosine scores."""
        q = np.asarray(query, dtype=np.float32)
        if q.ndim != 1:
            raise ValueError(f"query must be 1-D, got shape {q.shape}")
        return self.search_many(q[None, :], k)[0]

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """`search` for each row of a (m, dim) array, in one FAISS call.

        This is also the neighbour search for kNN edges: exact below the approximate
        threshold, IVF above it (fewer than k hits only if the scanned cells hold fewer)."""
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must have shape (m, {self.dim}), got {q.shape}")
        k = min(k, len(self.ids))
        if k <= 0 or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])]
        scores, labels = self._index.search(_normalise(q), k)
        by_label = self._by_label
        return [
            [(by_label[p], float(s)) for p, s in zip(row_p, row_s, strict=True) if p >= 0]
            for row_p, row_s in zip(labels.tolist(), scores.tolist(), strict=True)
        ]

    def within(self, queries: np.ndarray, radius: float) -> list[dict[str, float]]:
        """For each query, every indexed id whose cosine to it exceeds `radius`, with the
        (float32) cosine: exhaustive, an IVF index scans every cell."""
        q = _normalise(np.asarray(queries, dtype=np.float32))
        params = None
        if self.kind == IVF:
            params = faiss.SearchParametersIVF()
            params.nprobe = int(self._index.nlist)
        return _range_rows(self._index, q, radius, params, self._by_label)

    def neighbours(self, ids: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        """For each indexed id, its k nearest other ids (itself left out), best first:
        the kNN-graph query. KeyError for an id that is not indexed."""
        if not ids:
            return []
        hits = self.search_many(self.vectors(ids), k + 1)
        return [
            [(c, s) for c, s in row if c != own][:k] for own, row in zip(ids, hits, strict=True)
        ]

    def vector(self, chunk_id: str) -> np.ndarray:
        """The stored (unit-length) vector of one id; KeyError if unknown."""
        return self._index.reconstruct(self._label[chunk_id])

    def vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """Stored vectors of several ids as a (len(ids), dim) array, in the order asked."""
        if not len(chunk_ids):
            return np.empty((0, self.dim), dtype=np.float32)
        keys = np.fromiter(
            (self._label[c] for c in chunk_ids), dtype=np.int64, count=len(chunk_ids)
        )
        return self._index.reconstruct_batch(keys)

    # ---- persistence (the file format lives in ingest/index_files.py) -----------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        """What `from_arrays` needs, as plain arrays (no pickles): ids in sorted order,
        then the unit vectors (flat) or the serialised IVF index and each id's label."""
        if self.kind == FLAT:
            vectors = self.vectors(self.ids)
            return {"vectors": vectors, "dim": np.asarray([self.dim], dtype=np.int64)}
        labels = np.fromiter((self._label[c] for c in self.ids), np.int64, len(self.ids))
        return {
            "faiss": faiss.serialize_index(self._index),
            "labels": labels,
            "dim": np.asarray([self.dim], dtype=np.int64),
            "trained_size": np.asarray([self.trained_size], dtype=np.int64),
        }

    def file_arrays(self) -> dict[str, np.ndarray]:
        """What reading the FAISS file `write_file` wrote needs beside it: each id's label,
        ids in sorted order (a flat index's labels are its positions)."""
        labels = np.fromiter((self._label[c] for c in self.ids), np.int64, len(self.ids))
        return {
            "labels": labels,
            "dim": np.asarray([self.dim], dtype=np.int64),
            "trained_size": np.asarray([self.trained_size], dtype=np.int64),
            "ivf": np.asarray([int(self.kind == IVF)], dtype=np.int64),
        }

    def write_file(self, path: Path) -> None:
        faiss.write_index(self._index, str(path))

    @classmethod
    def from_file(
        cls,
        path: Path,
        ids: list[str],
        arrays: dict[str, np.ndarray],
        nprobe: int | None = None,
        *,
        removed: Iterable[str] = (),
        added_ids: Sequence[str] = (),
        added_vectors: np.ndarray | None = None,
    ) -> DenseIndex:
        """The index `write_file` wrote, read into memory (to fold changes into a new base),
        with `apply(removed, added_ids, added_vectors)` done on the way."""
        index = faiss.read_index(str(path))
        if isinstance(index, faiss.IndexIVF):
            serialised = {"faiss": faiss.serialize_index(index), **arrays}
        else:
            n, dim = index.ntotal, int(index.d)
            rows = faiss.rev_swig_ptr(index.get_xb(), n * dim).reshape(n, dim) if n else None
            serialised = {"vectors": rows if rows is not None else np.empty((0, dim)), **arrays}
        return cls.from_arrays(
            ids,
            serialised,
            nprobe,
            removed=removed,
            added_ids=added_ids,
            added_vectors=added_vectors,
        )

    @classmethod
    def from_arrays(
        cls,
        ids: list[str],
        arrays: dict[str, np.ndarray],
        nprobe: int | None = None,
        *,
        removed: Iterable[str] = (),
        added_ids: Sequence[str] = (),
        added_vectors: np.ndarray | None = None,
    ) -> DenseIndex:
        """Inverse of `to_arrays` for the same sorted `ids`, with `apply(removed, added_ids,
        added_vectors)` done on the way (cheaper than after, for a flat index); ValueError
        when the arrays and ids disagree."""
        dim = int(arrays["dim"][0])
        if added_vectors is None:
            added_vectors = np.empty((0, dim), dtype=np.float32)
        if "faiss" not in arrays:
            vectors = np.asarray(arrays["vectors"], dtype=np.float32)
            if vectors.size != len(ids) * dim or ids != sorted(ids):
                raise ValueError("flat index arrays do not match their ids")
            vectors = vectors.reshape(len(ids), dim)  # (0, 0) too: an index of no chunks
            matrix = _checked(added_ids, added_vectors, dim=dim)
            unit = _normalise(matrix) if len(added_ids) else matrix
            gone = set(removed) & set(ids)
            if set(added_ids) & (set(ids) - gone) or len(set(added_ids)) != len(added_ids):
                raise ValueError("ids already indexed")
            return cls._flat_merged(ids, vectors, gone, added_ids, unit)
        index = faiss.deserialize_index(np.asarray(arrays["faiss"], dtype=np.uint8))
        if not isinstance(index, faiss.IndexIVFFlat) or index.d != dim:
            raise ValueError("not an IVF-Flat index of the recorded dimension")
        labels = arrays["labels"].tolist()
        if len(labels) != len(ids):
            raise ValueError("IVF labels do not match their ids")
        if nprobe is not None:
            index.nprobe = nprobe
        trained = int(arrays["trained_size"][0])
        loaded = cls(index, dict(zip(ids, labels, strict=True)), trained_size=trained)
        removed = list(removed)
        if removed or len(added_ids):
            loaded.apply(removed, added_ids, added_vectors)
        return loaded


def _range_rows(
    index: faiss.Index,
    unit: np.ndarray,
    radius: float,
    params: faiss.SearchParameters | None,
    by_label: Sequence[str | None],
) -> list[dict[str, float]]:
    if not len(unit) or not index.ntotal:
        return [{} for _ in range(len(unit))]
    lims, scores, labels = index.range_search(unit, float(radius), params=params)
    out: list[dict[str, float]] = []
    for i in range(len(unit)):
        a, b = int(lims[i]), int(lims[i + 1])
        out.append(
            {
                str(by_label[p]): float(s)
                for p, s in zip(labels[a:b].tolist(), scores[a:b].tolist(), strict=True)
            }
        )
    return out


def _checked(ids: Sequence[str], vectors: np.ndarray, dim: int | None = None) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"vectors must be 2-D (n, dim), got shape {matrix.shape}")
    if matrix.shape[0] != len(ids):
        raise ValueError(f"{len(ids)} ids for {matrix.shape[0]} vectors")
    if dim is not None and len(ids) and matrix.shape[1] != dim:
        raise ValueError(f"vectors have dimension {matrix.shape[1]}, the index {dim}")
    if not np.isfinite(matrix).all():
        raise ValueError("vectors contain NaN or infinity")
    if dim is not None and not len(ids):
        return np.empty((0, dim), dtype=np.float32)
    return matrix


def _training_sample(unit: np.ndarray, nlist: int) -> np.ndarray:
    """At most 64 points per cell, evenly spaced (deterministic): k-means time grows with
    the sample, and more points per cell barely move the centroids."""
    cap = 64 * nlist
    if unit.shape[0] <= cap:
        return unit
    step = unit.shape[0] / cap
    return np.ascontiguousarray(unit[(np.arange(cap) * step).astype(np.int64)])


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """The float32 unit rows the index holds for `vectors` (as `DenseIndex.vectors` gives
    them back): SEMANTIC scores these, so an update can read a chunk's row from the search
    files instead of the store (ingest/edges/indexed.py)."""
    return _normalise(np.asarray(vectors, dtype=np.float32))


def _normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (score 0) instead of NaN. A pure
    function of each row (numpy reduces each contiguous row alone, whatever the batch), so a
    row added later is normalised as a build normalises it."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)
