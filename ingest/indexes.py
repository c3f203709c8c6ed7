"""The query-side search files kept after each ingest, keyed by the corpus fingerprint:
FAISS over chunk embeddings, BM25 over chunk tokens, and BM25 over each chunk's utility
questions (SpectRAG's question matching).

`update` brings them up to date from the published files plus the change, which it finds
by comparing the documents the files were built from (content hash per document) with the
store's: the chunks of removed or changed documents are dropped, those of new or changed
documents are read from the store (just those) and written as one delta segment
(ingest/index_files.py). A full `build` from the store happens when there are no usable
files, the index settings changed, the change is a large part of the corpus, or the dense
index must change kind (crossing `approximate_above`) or retrain its IVF cells.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from graph.base import GraphStore, TermMatrix
from graph.config import SearchIndexConfig
from graph.dense import FLAT, IVF, DenseIndex
from graph.dense_mapped import MappedDenseIndex
from graph.lexical import Bm25Params, LexicalIndex, merge_terms, select_rows
from graph.postings import Postings
from graph.types import ChunkRecord, DocumentRecord
from ingest.index_files import (
    BASE,
    DELTA,
    IndexFileError,
    Manifest,
    Segment,
    publish,
    read_manifest,
    read_segment,
    segments_present,
    write_segment,
)
from ingest.tokens import Analyzer

_LOAD_ATTEMPTS = 3


def doc_id_of(chunk_id: str) -> str:
    """Chunk ids are `<doc id>#<rest>` (ingest.chunkers.chunk_id)."""
    return chunk_id.rsplit("#", 1)[0]


@dataclass(slots=True)
class SearchIndexes:
    dense: DenseIndex
    lexical: LexicalIndex
    utility: LexicalIndex

    @staticmethod
    def published(directory: Path, key: str) -> bool:
        """Whether files for `key` are published and all present (sizes only: cheap)."""
        manifest = read_manifest(directory)
        return (
            manifest is not None and manifest.key == key and segments_present(directory, manifest)
        )

    @staticmethod
    def load(
        directory: Path, key: str, config: SearchIndexConfig | None = None, *, verify: bool = True
    ) -> SearchIndexes | None:
        """The published indexes for `key`, or None when missing, stale or damaged.

        The manifest is re-read if it changed while its segments were being read (a
        writer published meanwhile), so a reader never mixes two states."""
        for _ in range(_LOAD_ATTEMPTS):
            manifest = read_manifest(directory)
            if manifest is None or manifest.key != key:
                return None
            try:
                return fold(directory, manifest, config, verify=verify)
            except IndexFileError:
                again = read_manifest(directory)
                if again is None or again.segments == manifest.segments:
                    return None
        return None

    @staticmethod
    def build(
        store: GraphStore,
        directory: Path,
        key: str,
        analyzer: Analyzer,
        config: SearchIndexConfig | None = None,
        *,
        publish_files: bool = True,
    ) -> SearchIndexes:
        """Build every index from the whole store and publish it as a new base (or, with
        `publish_files=False`, only return it)."""
        config = config or SearchIndexConfig()
        documents = store.documents()
        store_terms = store.term_matrix()
        rows = store.index_inputs()  # streamed: ids, documents, questions and vectors only
        # The reads above are separate: a chunk seen by one and not the other (a writer
        # raced this build) is left out, and its document marked stale for the next update.
        in_terms = set(store_terms.chunk_ids)
        listed = [i for i, c in enumerate(rows.chunk_ids) if c in in_terms]
        pairs = zip(rows.chunk_ids, rows.chunk_docs, strict=True)
        racing = {d for c, d in pairs if c not in in_terms}
        chunk_docs = {rows.chunk_ids[i]: rows.chunk_docs[i] for i in listed}
        keep = np.fromiter((c in chunk_docs for c in store_terms.chunk_ids), bool)
        racing |= {doc_id_of(c) for c, k in zip(store_terms.chunk_ids, keep, strict=True) if not k}
        terms = merge_terms([select_rows(store_terms, keep)])
        del store_terms
        questions = _question_matrix(
            [rows.chunk_ids[i] for i in listed], [rows.questions[i] for i in listed], analyzer
        )
        with_vectors = [i for i, c in enumerate(rows.vector_ids) if c in chunk_docs]
        dense = DenseIndex.build(
            [rows.vector_ids[i] for i in with_vectors],
            rows.vectors[with_vectors] if len(with_vectors) else np.zeros((0, 0), np.float32),
            config,
        )
        del rows
        params = Bm25Params()
        indexes = SearchIndexes(
            dense, LexicalIndex.build(terms, params), LexicalIndex.build(questions, params)
        )
        if not publish_files:
            return indexes
        base = Segment.of(
            BASE,
            [],
            list(chunk_docs),
            list(chunk_docs.values()),
            terms,
            questions,
            dense.ids,
            dense.file_arrays(),
            dense_index=dense,
        )
        ref = write_segment(directory, base)
        counts = Counter(chunk_docs.values())
        hashes: dict[str, str | None] = {d: r.content_hash for d, r in documents.items()}
        for d in set(counts) - set(documents) | racing:
            hashes[d] = None
        previous = read_manifest(directory)
        manifest = Manifest(
            key,
            settings_of(config),
            hashes,
            {d: counts.get(d, 0) for d in hashes},
            [ref],
            dense_kind=dense.kind,
            trained_size=dense.trained_size,
            previous=_files(previous),
        )
        publish(directory, manifest)
        return indexes

    @staticmethod
    def update(
        store: GraphStore,
        directory: Path,
        key: str,
        analyzer: Analyzer,
        config: SearchIndexConfig | None = None,
        documents: dict[str, DocumentRecord] | None = None,
    ) -> str:
        """Bring the published files up to date with the store; returns what it did:
        "unchanged", "delta", "compacted" (delta then folded into a new base) or "full"."""
        config = config or SearchIndexConfig()
        manifest = read_manifest(directory)
        if (
            manifest is None
            or manifest.settings != settings_of(config)
            or not segments_present(directory, manifest)
        ):
            SearchIndexes.build(store, directory, key, analyzer, config)
            return "full"
        documents = store.documents() if documents is None else documents
        current = {d: r.content_hash for d, r in documents.items()}
        indexed = manifest.documents
        differ = {d for d, _ in current.items() ^ indexed.items()}
        gone = {d for d in differ if d in indexed}  # its indexed version is not current
        fresh = sorted(d for d in differ if d in current)
        if not gone and not fresh:
            if manifest.key != key:
                publish(directory, _next(manifest, key=key))
            return "unchanged"
        chunks = store.document_chunks(fresh) if fresh else []
        counts = Counter(c.doc_id for c in chunks)
        hashes, chunk_counts = dict(indexed), dict(manifest.chunk_counts)
        for d in gone:
            del hashes[d], chunk_counts[d]
        for d in fresh:
            hashes[d], chunk_counts[d] = current[d], counts.get(d, 0)
        total = sum(chunk_counts.values())
        if len(chunks) > config.compact_fraction * max(manifest.chunks, 1) or _needs_new_kind(
            manifest, total, config
        ):
            SearchIndexes.build(store, directory, key, analyzer, config)
            return "full"
        delta = _delta_segment(sorted(gone | set(fresh)), chunks, analyzer)
        dropped = sum(manifest.chunk_counts[d] for d in gone)
        ref = write_segment(directory, delta, dropped=dropped)
        updated = _next(
            manifest,
            key=key,
            documents=hashes,
            chunk_counts=chunk_counts,
            segments=[*manifest.segments, ref],
        )
        if (
            updated.churn > config.compact_fraction * max(updated.segments[0].chunks, 1)
            or len(updated.segments) - 1 > config.max_segments
        ):
            try:
                compacted = _compacted(directory, updated, config)
            except IndexFileError:  # a damaged older segment: start again from the store
                SearchIndexes.build(store, directory, key, analyzer, config)
                return "full"
            publish(directory, compacted)
            return "compacted"
        publish(directory, updated)
        return "delta"

    @classmethod
    def load_or_build(
        cls,
        store: GraphStore,
        directory: Path,
        key: str,
        analyzer: Analyzer,
        config: SearchIndexConfig | None = None,
    ) -> SearchIndexes:
        """The published indexes for `key`, else a build from the store. The build is
        published only when no intact manifest is there: one for another key means an
        ingest is publishing (its own key is set in the store right after), and a reader
        must not overwrite a writer's files with its view of the store."""
        loaded = cls.load(directory, key, config)
        if loaded is not None:
            return loaded
        other = read_manifest(directory)
        clobber = other is None or not segments_present(directory, other) or other.key == key
        return cls.build(store, directory, key, analyzer, config, publish_files=clobber)


def refresh_indexes(
    store: GraphStore,
    directory: Path,
    key: str,
    analyzer: Analyzer,
    config: SearchIndexConfig,
    *,
    rebuild: bool = False,
    documents: dict[str, DocumentRecord] | None = None,
) -> str:
    """The ingest's index stage: an update from the published files, or a full build."""
    if rebuild:
        SearchIndexes.build(store, directory, key, analyzer, config)
        return "full"
    return SearchIndexes.update(store, directory, key, analyzer, config, documents)


def settings_of(config: SearchIndexConfig) -> dict[str, object]:
    """What the files' content depends on besides the documents: a change means a rebuild.
    Query-time (`ivf_nprobe`) and maintenance settings are left out on purpose."""
    return {
        "approximate_above": config.approximate_above,
        "ivf_nlist": config.ivf_nlist,
        "bm25": asdict(Bm25Params()),
    }


def _question_matrix(
    ids: list[str], questions: list[tuple[str, ...]], analyzer: Analyzer
) -> TermMatrix:
    """`question_terms` from ids and questions alone (canonical form)."""
    counts = [Counter(analyzer.tokens(" ".join(q))) for q in questions]
    vocabulary = sorted({t for c in counts for t in c})
    col = {t: j for j, t in enumerate(vocabulary)}
    indptr = np.zeros(len(ids) + 1, dtype=np.int64)
    cols: list[int] = []
    vals: list[float] = []
    for i, c in enumerate(counts):
        for t, n in c.items():
            cols.append(col[t])
            vals.append(float(n))
        indptr[i + 1] = len(cols)
    tf = sparse.csr_matrix(
        (np.asarray(vals, dtype=np.float64), np.asarray(cols, dtype=np.int64), indptr),
        shape=(len(ids), len(vocabulary)),
    )
    return merge_terms([TermMatrix(ids, vocabulary, tf)])


def question_terms(chunks: Sequence[ChunkRecord], analyzer: Analyzer) -> TermMatrix:
    """Utility-question term frequencies of `chunks`, in canonical form (merge_terms)."""
    return _term_matrix(chunks, [Counter(analyzer.tokens(" ".join(c.questions))) for c in chunks])


def chunk_terms(chunks: Sequence[ChunkRecord]) -> TermMatrix:
    """Token term frequencies of `chunks` as the store's term_matrix would give them."""
    return _term_matrix(chunks, [c.token_counts() for c in chunks])


def _term_matrix(chunks: Sequence[ChunkRecord], counts: Sequence[Mapping[str, int]]) -> TermMatrix:
    """One row of term counts per chunk, in canonical form (merge_terms)."""
    vocabulary = sorted({t for c in counts for t in c})
    col = {t: j for j, t in enumerate(vocabulary)}
    rows, cols, vals = [], [], []
    for i, c in enumerate(counts):
        for t, n in c.items():
            rows.append(i)
            cols.append(col[t])
            vals.append(float(n))
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(chunks), len(vocabulary)))
    return merge_terms([TermMatrix([c.id for c in chunks], vocabulary, tf)])


def fold(
    directory: Path,
    manifest: Manifest,
    config: SearchIndexConfig | None = None,
    *,
    verify: bool = True,
) -> SearchIndexes:
    """The indexes over the manifest's segments as they lie on disk: the lexical indexes
    read each segment's mapped postings in place (nothing the size of the corpus is
    copied or weighted), with every live row at its canonical position, so they score as
    a fresh build does."""
    segments = [read_segment(directory, ref, verify=verify) for ref in manifest.segments]
    keep = _keep_flags(segments)
    pairs = list(zip(segments, keep, strict=True))
    params = Bm25Params()
    terms = _placed([(s.terms, s.terms_ids, _mask(s, k, s.terms_ids)) for s, k in pairs])
    questions = _placed(
        [(s.questions, s.questions_ids, _mask(s, k, s.questions_ids)) for s, k in pairs]
    )
    return SearchIndexes(
        _dense(segments, keep, config, mapped=True),
        LexicalIndex(*terms, params),
        LexicalIndex(*questions, params),
    )


def _keep_flags(segments: list[Segment]) -> list[np.ndarray]:
    """Per segment, which of its chunks survive: a chunk added by segment j survives
    unless a later segment drops its document."""
    dropped_later: set[str] = set()
    keep: list[np.ndarray] = [np.empty(0, bool)] * len(segments)
    for j in reversed(range(len(segments))):
        seg = segments[j]
        keep[j] = _surviving(seg, dropped_later)
        dropped_later.update(seg.removed_docs)
    return keep


def _mask(seg: Segment, flags: np.ndarray, ids: list[str]) -> np.ndarray:
    """`flags` (over seg.chunk_ids) for the rows `ids`: the same list as a rule."""
    if ids is seg.chunk_ids or ids == seg.chunk_ids:
        return flags
    where = dict(zip(seg.chunk_ids, flags.tolist(), strict=True))
    return np.fromiter((where[c] for c in ids), bool, len(ids))


def _placed(
    parts: list[tuple[Postings, list[str], np.ndarray]],
) -> tuple[list[tuple[Postings, np.ndarray]], list[str]]:
    """Each part's postings with its rows' canonical positions (-1: dropped), and the live
    ids in canonical (sorted) order. The first part is the base, sorted and large; the
    others' few live rows are placed by bisection, so the cost is a pass over the base's
    flags, not a sort of every id."""
    if not parts:
        return [], []
    _, base_ids, base_keep = parts[0]
    live_rows = np.flatnonzero(base_keep)
    base_live = [base_ids[i] for i in live_rows.tolist()]
    extra = sorted(
        (c, k, r)
        for k, (_, ids, keep) in enumerate(parts[1:], start=1)
        for r, c in enumerate(ids)
        if keep[r]
    )
    cuts = np.asarray([bisect_left(base_live, c) for c, _, _ in extra], dtype=np.int64)
    positions = [np.full(len(ids), -1, dtype=np.int64) for _, ids, _ in parts]
    rank = np.arange(len(base_live), dtype=np.int64)
    positions[0][live_rows] = rank + np.searchsorted(cuts, rank, side="right")
    for i, (_, k, r) in enumerate(extra):
        positions[k][r] = int(cuts[i]) + i
    ordered: list[str] = []
    start = 0
    for i, (c, _, _) in enumerate(extra):
        cut = int(cuts[i])
        ordered += base_live[start:cut]
        ordered.append(c)
        start = cut
    ordered += base_live[start:]
    placed = [(postings, at) for (postings, _, _), at in zip(parts, positions, strict=True)]
    return placed, ordered


def _dense(
    segments: list[Segment],
    keep: list[np.ndarray],
    config: SearchIndexConfig | None,
    *,
    mapped: bool = False,
) -> DenseIndex:
    """The base's dense index with the later segments' changes: `mapped`, its FAISS file
    mapped read-only with the changes laid over it (queries); otherwise read into memory
    with the changes applied (a compaction writes it as the new base)."""
    base = segments[0]
    base_keep = _mask(base, keep[0], base.dense_ids)
    added_ids: list[str] = []
    added: list[np.ndarray] = []
    for seg, flags in zip(segments[1:], keep[1:], strict=True):
        if not seg.dense_ids:
            continue
        rows = _mask(seg, flags, seg.dense_ids)
        added_ids += [c for c, k in zip(seg.dense_ids, rows.tolist(), strict=True) if k]
        added.append(seg.dense["raw"][rows])
    removed = [c for c, k in zip(base.dense_ids, base_keep.tolist(), strict=True) if not k]
    nprobe = config.ivf_nprobe if config is not None else None
    vectors = np.concatenate(added) if added else None
    if base.dense_file is None:
        raise IndexFileError("the base segment names no dense index file")
    if mapped:
        return MappedDenseIndex.open(
            base.dense_file,
            base.dense_ids,
            np.asarray(base.dense["labels"]),
            kind=IVF if int(base.dense["ivf"][0]) else FLAT,
            trained_size=int(base.dense["trained_size"][0]),
            nprobe=nprobe,
            removed=removed,
            added_ids=added_ids,
            added_vectors=vectors,
        )
    return DenseIndex.from_file(
        base.dense_file,
        base.dense_ids,
        base.dense,
        nprobe,
        removed=removed,
        added_ids=added_ids,
        added_vectors=vectors,
    )


def _folded(
    segments: list[Segment], config: SearchIndexConfig | None
) -> tuple[DenseIndex, TermMatrix, TermMatrix]:
    """Every segment merged into the canonical matrices a fresh build reads (compaction)."""
    keep = _keep_flags(segments)
    pairs = list(zip(segments, keep, strict=True))
    terms = merge_terms([select_rows(s.term_matrix(), _mask(s, k, s.terms_ids)) for s, k in pairs])
    questions = merge_terms(
        [select_rows(s.question_matrix(), _mask(s, k, s.questions_ids)) for s, k in pairs]
    )
    return _dense(segments, keep, config), terms, questions


def _surviving(seg: Segment, dropped: set[str]) -> np.ndarray:
    """Which of the segment's chunks belong to none of the `dropped` documents.

    A few documents dropped from a big segment are found by bisection: chunk ids start
    with their document's id and "#", so one document's chunks are a contiguous run of the
    sorted ids (each hit is confirmed against `chunk_docs`, and the run's size against a
    full count, so ids of another shape fall back to the scan)."""
    ids, docs = seg.chunk_ids, seg.chunk_docs
    if not dropped:
        return np.ones(len(ids), dtype=bool)
    if len(dropped) <= 16 and len(ids) > 1_000:  # the count below is a C scan per doc
        keep = np.ones(len(ids), dtype=bool)
        found = 0
        for d in dropped:
            lo, hi = bisect_left(ids, d + "#"), bisect_left(ids, d + "$")
            hits = [i for i in range(lo, hi) if docs[i] == d]
            keep[hits] = False
            found += len(hits)
        if found == _count_in(docs, dropped):
            return keep
    return np.fromiter((d not in dropped for d in docs), bool, len(docs))


def _count_in(docs: list[str], wanted: set[str]) -> int:
    """How many entries of `docs` are in `wanted` (a C-level count per wanted document)."""
    return sum(docs.count(d) for d in wanted)


def _delta_segment(
    removed_docs: list[str], chunks: Sequence[ChunkRecord], analyzer: Analyzer
) -> Segment:
    ordered = sorted(chunks, key=lambda c: c.id)
    with_vectors = [c for c in ordered if c.embedding is not None]
    return Segment.of(
        kind=DELTA,
        removed_docs=removed_docs,
        chunk_ids=[c.id for c in ordered],
        chunk_docs=[c.doc_id for c in ordered],
        terms=chunk_terms(ordered),
        questions=question_terms(ordered, analyzer),
        dense_ids=[c.id for c in with_vectors],
        dense={"raw": _matrix(with_vectors, empty_dim=0)},
    )


def _compacted(directory: Path, manifest: Manifest, config: SearchIndexConfig) -> Manifest:
    """Fold every segment into one new base segment (from the files, not the store)."""
    segments = [read_segment(directory, ref) for ref in manifest.segments]
    dense, terms, questions = _folded(segments, config)
    chunk_docs: dict[str, str] = {}
    dropped: set[str] = set()
    for seg in reversed(segments):
        for c, d in zip(seg.chunk_ids, seg.chunk_docs, strict=True):
            if d not in dropped:
                chunk_docs.setdefault(c, d)
        dropped.update(seg.removed_docs)
    ids = sorted(chunk_docs)
    base = Segment.of(
        BASE,
        [],
        ids,
        [chunk_docs[c] for c in ids],
        terms,
        questions,
        dense.ids,
        dense.file_arrays(),
        dense_index=dense,
    )
    ref = write_segment(directory, base)
    return _next(manifest, segments=[ref], dense_kind=dense.kind, trained_size=dense.trained_size)


def _needs_new_kind(manifest: Manifest, total: int, config: SearchIndexConfig) -> bool:
    """Whether `total` chunks need the other dense index kind, or newly trained IVF cells
    (the corpus grew or shrank by `ivf_retrain_growth` since they were trained)."""
    if (total > config.approximate_above) != (manifest.dense_kind == IVF):
        return True
    if manifest.dense_kind == IVF:
        trained, growth = max(manifest.trained_size, 1), config.ivf_retrain_growth
        return total > trained * growth or total < trained / growth
    return False


def _next(manifest: Manifest, **changes: object) -> Manifest:
    fields = {
        "key": manifest.key,
        "settings": manifest.settings,
        "documents": manifest.documents,
        "chunk_counts": manifest.chunk_counts,
        "segments": manifest.segments,
        "dense_kind": manifest.dense_kind,
        "trained_size": manifest.trained_size,
    }
    fields.update(changes)
    return Manifest(previous=_files(manifest), **fields)  # type: ignore[arg-type]


def _files(manifest: Manifest | None) -> list[str]:
    return [] if manifest is None else [f for s in manifest.segments for f in (s.file, *s.files)]


def _matrix(chunks: Sequence[ChunkRecord], empty_dim: int) -> np.ndarray:
    if not chunks:
        return np.zeros((0, empty_dim), dtype=np.float32)
    return np.stack([np.asarray(c.embedding, dtype=np.float32) for c in chunks])
