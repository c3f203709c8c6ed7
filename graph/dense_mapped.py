"""A dense index whose base lies in a FAISS file mapped read-only, with the later changes
laid over it: the removed chunks hidden from searches, the added ones searched exactly
beside it.

Why: a base index at 200k chunks is 300 MB of vectors. Read into every query process it is
private memory, a copy per process and seconds per start; mapped (FAISS `IO_FLAG_MMAP`:
IVF lists and flat codes alike) it costs nothing until a search touches its pages, and
those pages are shared by every process that maps the file. Updates never write to the
base (ingest/index_files.py keeps it as an immutable segment): a delta's removals become a
search-time exclusion (`IDSelectorNot`) and its additions a small exact index, until the
next compaction folds them into a new base.

Results: the base's top k (without the hidden chunks) and the added chunks' top k, merged
by (−score, id). For a flat base that is exactly a fresh build's top k; for an IVF base
the added chunks are found exactly, where a rebuilt index would find them only in the
cells it probes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from pathlib import Path

import faiss
import numpy as np

from graph.dense import FLAT, IVF, DenseIndex, _checked, _normalise, _range_rows

# FAISS maps IVF lists and flat codes under different flags, which it does not combine.
_MAPPED = {
    IVF: faiss.IO_FLAG_READ_ONLY | faiss.IO_FLAG_MMAP,
    FLAT: faiss.IO_FLAG_READ_ONLY | faiss.IO_FLAG_MMAP_IFC,
}


class MappedDenseIndex(DenseIndex):
    __slots__ = ("_added", "_added_at", "_added_ids", "_params")

    @classmethod
    def open(
        cls,
        path: Path,
        ids: list[str],
        labels: np.ndarray,
        *,
        kind: str,
        trained_size: int = 0,
        nprobe: int | None = None,
        removed: Iterable[str] = (),
        added_ids: Sequence[str] = (),
        added_vectors: np.ndarray | None = None,
    ) -> MappedDenseIndex:
        """`ids` (sorted) and `labels` describe the file's vectors (DenseIndex.file_arrays);
        `removed` are hidden, `added_*` searched beside the base."""
        index = faiss.read_index(str(path), _MAPPED[kind])
        if index.ntotal != len(ids) or len(labels) != len(ids):
            raise ValueError(f"{path.name}: {index.ntotal} vectors for {len(ids)} ids")
        out = cls.__new__(cls)
        out._index = index
        out.kind = IVF if isinstance(index, faiss.IndexIVF) else FLAT
        out.trained_size = trained_size
        label_list = labels.tolist()
        if out.kind == FLAT:
            if label_list != list(range(len(ids))):
                raise ValueError("a flat index must hold its vectors in sorted-id order")
            out._by_label = ids
        else:
            index.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct by label
            by_label: list[str | None] = [None] * (max(label_list, default=-1) + 1)
            for chunk_id, label in zip(ids, label_list, strict=True):
                by_label[label] = chunk_id
            out._by_label = by_label
            if nprobe is not None:
                index.nprobe = nprobe
        gone = set(removed) & set(ids)
        dim = int(index.d)
        vectors = np.empty((0, dim), dtype=np.float32) if added_vectors is None else added_vectors
        matrix = _checked(added_ids, vectors, dim=dim)
        order = sorted(range(len(added_ids)), key=added_ids.__getitem__)
        out._added_ids = [added_ids[i] for i in order]
        out._added_at = {c: i for i, c in enumerate(out._added_ids)}
        out._added = faiss.IndexFlatIP(dim)
        if order:
            out._added.add(_normalise(matrix[order]))
        live_base = [c for c in ids if c not in gone] if gone else ids
        live_set = set(live_base) if order else set()
        clash = [c for c in out._added_ids if c in live_set]
        if clash or len(out._added_at) != len(added_ids):
            raise ValueError(f"ids already indexed: {sorted(set(clash))[:5]}")
        out._label = {c: label for c, label in zip(ids, label_list, strict=True) if c not in gone}
        out.ids = _merged(live_base, out._added_ids)
        hidden = np.fromiter((out._label_of(c, labels, ids) for c in sorted(gone)), np.int64)
        out._params = None
        if len(hidden):
            batch = faiss.IDSelectorBatch(len(hidden), faiss.swig_ptr(hidden))
            selector = faiss.IDSelectorNot(batch)
            params = faiss.SearchParametersIVF() if out.kind == IVF else faiss.SearchParameters()
            params.sel = selector
            # FAISS holds raw pointers: the selectors must live as long as the parameters.
            out._params = (params, selector, batch)
        out._sync_nprobe()
        return out

    @staticmethod
    def _label_of(chunk_id: str, labels: np.ndarray, ids: list[str]) -> int:
        return int(labels[bisect_left(ids, chunk_id)])

    def _sync_nprobe(self) -> None:
        if self._params is not None and self.kind != FLAT:
            self._params[0].nprobe = int(self._index.nprobe)

    @property
    def nprobe(self) -> int:
        return int(self._index.nprobe) if self.kind != FLAT else 0

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if self.kind != FLAT:
            self._index.nprobe = max(1, int(value))
            self._sync_nprobe()

    def apply(
        self, removed: Iterable[str], added_ids: Sequence[str], added_vectors: np.ndarray
    ) -> None:
        raise ValueError("a mapped index is read-only: updates go to a new segment")

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        q = np.asarray(queries, dtype=np.float32)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must have shape (m, {self.dim}), got {q.shape}")
        k = min(k, len(self.ids))
        if k <= 0 or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])]
        unit = _normalise(q)
        base_k = min(k, len(self._label))
        rows: list[list[tuple[str, float]]] = [[] for _ in range(q.shape[0])]
        if base_k:
            params = self._params[0] if self._params is not None else None
            scores, labels = self._index.search(unit, base_k, params=params)
            by_label = self._by_label
            for row, (ps, ss) in enumerate(zip(labels.tolist(), scores.tolist(), strict=True)):
                rows[row] = [(by_label[p], s) for p, s in zip(ps, ss, strict=True) if p >= 0]
        if not self._added_ids:
            return rows
        scores, positions = self._added.search(unit, min(k, len(self._added_ids)))
        for row, (ps, ss) in enumerate(zip(positions.tolist(), scores.tolist(), strict=True)):
            extra = [(self._added_ids[p], s) for p, s in zip(ps, ss, strict=True) if p >= 0]
            rows[row] = sorted(rows[row] + extra, key=lambda h: (-h[1], h[0]))[:k]
        return rows

    def within(self, queries: np.ndarray, radius: float) -> list[dict[str, float]]:
        unit = _normalise(np.asarray(queries, dtype=np.float32))
        if self.kind == IVF:
            params = faiss.SearchParametersIVF()
            params.nprobe = int(self._index.nlist)
            if self._params is not None:
                params.sel = self._params[1]
        else:
            params = self._params[0] if self._params is not None else None
        rows = _range_rows(self._index, unit, radius, params, self._by_label)
        if self._added_ids:
            scores = faiss.rev_swig_ptr(self._added.get_xb(), len(self._added_ids) * self.dim)
            matrix = scores.reshape(len(self._added_ids), self.dim)
            for row, values in zip(rows, unit @ matrix.T, strict=True):
                for j in np.flatnonzero(values > radius).tolist():
                    row[self._added_ids[j]] = float(values[j])
        return rows

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._label or chunk_id in self._added_at

    def vector(self, chunk_id: str) -> np.ndarray:
        return self.vectors([chunk_id])[0]

    def vectors(self, chunk_ids: Sequence[str]) -> np.ndarray:
        out = np.empty((len(chunk_ids), self.dim), dtype=np.float32)
        base = [(i, self._label[c]) for i, c in enumerate(chunk_ids) if c not in self._added_at]
        if base:
            rows, keys = zip(*base, strict=True)
            out[list(rows)] = self._index.reconstruct_batch(np.asarray(keys, dtype=np.int64))
        for i, c in enumerate(chunk_ids):
            if c in self._added_at:
                out[i] = self._added.reconstruct(self._added_at[c])
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        raise ValueError("a mapped index is written from the segments it was read from")


def _merged(base: list[str], extra: list[str]) -> list[str]:
    """Two sorted id lists as one (the second short)."""
    if not extra:
        return base
    out: list[str] = []
    start = 0
    for c in extra:
        cut = bisect_left(base, c, start)
        out += base[start:cut]
        out.append(c)
        start = cut
    return out + base[start:]
