"""The incremental, crash-safe ingest pipeline.

Per-document stages run in batches and each batch is written in one store transaction
together with its documents' content hashes, so after a kill every document is either fully
in the store or absent, and a re-run picks up exactly the documents still missing:

    scan → plan → [chunk → analyze → embed → write] per batch → edges → analytics → indexes

Chunk, analyze and embed may run in worker processes (`ingest.parallel`, the `workers`
setting); the write stays here, one batch at a time in the original order.

The global stages (chunk edges, communities/embeddings, FAISS/BM25 files) are pure functions
of the stored documents; they re-run whenever the stored document set's fingerprint differs
from the one they were last built for, so a crash between stages is also recovered. Chunk
edges follow the change rather than rebuilding: every write that removes documents carries
a journal of what it removed (ingest/edges/journal.py), and the edge stage turns journal
plus stored edges into an exact update (ingest/edges/maintain.py). Analytics after a small
change place only the new chunks and are marked stale (ingest/analytics_refresh.py).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from graph.base import GraphStore
from graph.config import AlgorithmConfig
from graph.errors import NeoragError
from graph.types import ChunkRecord, DocumentRecord, GraphDelta
from ingest.analytics_refresh import refresh_analytics
from ingest.chunkers import chunk_document, chunk_id
from ingest.config import IngestConfig
from ingest.edges.journal import JournalWriter
from ingest.edges.maintain import pending, refresh_chunk_edges
from ingest.edges.workspace import FILE_NAME as WORKSPACE_FILE
from ingest.edges.workspace import EdgeWorkspace
from ingest.embed import embedding_text, model_identity
from ingest.identity import document_id
from ingest.indexes import SearchIndexes, refresh_indexes
from ingest.loaders import LoadedDocument, SkippedFile, UnchangedFile, scan
from ingest.loaders.types import NOT_PROBLEMS
from ingest.model_stamp import (
    ModelStamp,
    mark_changing,
    plan_model_change,
    reembed_documents,
    write_stamp,
)
from ingest.models import IngestModels
from ingest.parallel import build_batches, vector_dimension
from ingest.published import DERIVED_KEY, corpus_fingerprint
from ingest.query_model import ensure_export
from ingest.report import CHUNKS_EMBEDDED, IngestReport, NoProgress, Progress, Skip, timed
from ingest.scan_cache import FILE_NAME, ScanCache, cache_key
from ingest.token_graph import cooccurrence_delta
from ingest.tokens import Analyzer

INDEX_STAGES = ("chunk", "analyze", "embed", "write")
ANALYSIS_SLICE = 16  # chunks per NER call: about a second on one core


@dataclass(slots=True)
class Plan:
    to_index: list[tuple[str, LoadedDocument]]
    changed_ids: set[str]
    removed_ids: list[str]
    unchanged: int


def config_fingerprint(cfg: IngestConfig) -> str:
    """Anything that changes what a document's chunks look like, the embedding model
    included: a new value re-indexes every document (its stored hash no longer matches)."""
    relevant = cfg.model_dump(include={"chunking", "tokens", "models"}, mode="json")
    # The model by what it is, not how it is named (a folder's contents, not its path).
    relevant["models"]["embedding_model"] = model_identity(cfg.models.embedding_model)
    del relevant["models"]["cache_dir"]  # where exports are kept says nothing of the chunks
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()[:16]


def document_hash(doc: LoadedDocument, cfg_fp: str) -> str:
    return hashlib.sha256(f"{doc.content_hash}:{cfg_fp}".encode()).hexdigest()


def _linked_key(root: Path) -> str:
    """The meta key of the linked folders outside `root` that its last ingest entered: the
    documents found there are this root's, also after the link is removed."""
    return f"linked_folders:{root}"


def _in_scope(source: str, roots: Sequence[Path]) -> bool:
    return any(
        source == str(root) or source.startswith(str(root).rstrip("/") + "/") for root in roots
    )


def plan(
    loaded: Sequence[LoadedDocument],
    skipped: Sequence[SkippedFile],
    stored: dict[str, DocumentRecord],
    roots: Sequence[Path],
    cfg_fp: str,
    collection: str,
    unchanged_keys: Sequence[str] = (),
) -> Plan:
    """Compare what the scan found under `roots` (the folder ingested and the linked folders
    it led to) with the store's documents of the same collection. Only documents whose
    source lies under one of `roots` can be removed, and documents
    stored from a file that was skipped this time (unreadable, say) are kept.
    `unchanged_keys` are documents of files the scan did not parse again (unchanged)."""
    to_index: list[tuple[str, LoadedDocument]] = []
    changed: set[str] = set()
    unchanged = len(unchanged_keys)
    seen: set[str] = {document_id(collection, key) for key in unchanged_keys}
    for doc in loaded:
        doc_id = document_id(collection, doc.key)
        seen.add(doc_id)
        old = stored.get(doc_id)
        if old is not None and old.content_hash == document_hash(doc, cfg_fp):
            unchanged += 1
            continue
        if old is not None:
            changed.add(doc_id)
        to_index.append((doc_id, doc))
    unreadable = {s.source for s in skipped}
    removed = sorted(
        doc_id
        for doc_id, rec in stored.items()
        if doc_id not in seen and _in_scope(rec.source, roots) and rec.source not in unreadable
    )
    return Plan(to_index, changed, removed, unchanged)


def build_chunks(
    docs: Sequence[tuple[str, LoadedDocument]],
    cfg: IngestConfig,
    models: IngestModels,
    analyzer: Analyzer,
    report: IngestReport,
    progress: Progress,
) -> list[tuple[DocumentRecord, list[ChunkRecord]]]:
    """Chunk, tokenise, extract entities and questions, and embed one batch of documents."""
    cfg_fp = config_fingerprint(cfg)
    out: list[tuple[DocumentRecord, list[ChunkRecord]]] = []
    with timed(report, "chunk", time.perf_counter):
        for doc_id, doc in docs:
            record = DocumentRecord(
                doc_id, doc.source, doc.title, document_hash(doc, cfg_fp), time.time()
            )
            chunks = [
                ChunkRecord(
                    id=chunk_id(doc_id, piece.ordinal, piece.text),
                    doc_id=doc_id,
                    ordinal=piece.ordinal,
                    title=doc.title,
                    text=piece.text,
                    section_path=tuple(piece.section_path),
                    n_tokens=piece.n_tokens,
                    links=tuple(piece.links),
                )
                for piece in chunk_document(doc, cfg.chunking, models.count_tokens)
            ]
            out.append((record, chunks))
    progress.advance("chunk", len(docs))
    flat = [c for _, cs in out for c in cs]
    stop, failed = threading.Event(), []

    def analyze() -> None:
        try:
            with timed(report, "analyze", time.perf_counter):
                analyse_chunks(flat, analyzer, models, stop)
        except BaseException as exc:  # handed to the batch's thread below
            failed.append(exc)

    # NER runs beside the embedding model: spaCy and torch both release the GIL, and on
    # two cores the overlap hides most of NER's time (measured: 19.4 s → 13.1 s for 600
    # passages). A daemon thread told to stop, so Ctrl-C never waits for a batch's NER.
    ner = threading.Thread(target=analyze, name="ner", daemon=True)
    ner.start()
    try:
        with timed(report, "embed", time.perf_counter):
            texts = [embedding_text(c.title, c.section_path, c.text) for c in flat]
            vectors = models.embedder.encode(texts, lambda n: chunks_embedded(progress, n))
            for c, v in zip(flat, vectors, strict=True):
                c.embedding = v
        progress.advance("embed", len(docs))
        ner.join()
    except BaseException:
        stop.set()
        raise
    if failed:
        raise failed[0]
    progress.advance("analyze", len(docs))
    return out


def chunks_embedded(progress: Progress, n: int) -> None:
    """Progress inside a batch (a large file is one document of many chunks)."""
    progress.advance(CHUNKS_EMBEDDED, n)


def analyse_chunks(
    chunks: Sequence[ChunkRecord],
    analyzer: Analyzer,
    models: IngestModels,
    stop: threading.Event | None = None,
) -> None:
    """Each chunk's tokens, entities and questions, set in place: the half of a batch's
    work that runs beside the embedding (bench/out/findings/ner-overlap-50k.json timed the
    two). In slices, so a set `stop` ends it within one slice's time."""
    for start in range(0, len(chunks), ANALYSIS_SLICE):
        if stop is not None and stop.is_set():
            return
        part = chunks[start : start + ANALYSIS_SLICE]
        for c in part:
            c.tokens = tuple(analyzer.tokens(c.text))
        analyses = models.extractor.analyze([c.text for c in part], [c.title for c in part])
        for c, a in zip(part, analyses, strict=True):
            c.entities, c.questions = a.entities, a.questions


def run_ingest(
    path: Path,
    store: GraphStore,
    cfg: IngestConfig,
    algorithms: AlgorithmConfig,
    index_dir: Path,
    *,
    models: IngestModels | None = None,
    progress: Progress | None = None,
    rebuild: bool = False,
    allowed_roots: Sequence[Path] | None = None,
) -> IngestReport:
    """Bring the store's collection up to date with the documents under `path`. With
    `allowed_roots`, files outside them (after resolving symbolic links) are skipped.
    `models` serve the in-process path (one worker, or a single batch); worker processes
    load their own."""
    progress = progress or NoProgress()
    root = path.resolve()
    report = IngestReport(
        path=str(root),
        backend=store.backend,
        collection=store.collection,
        started_at=time.time(),
    )
    analyzer = Analyzer(cfg.tokens)
    cfg_fp = config_fingerprint(cfg)
    if rebuild:
        store.clear()
    scan_cache = ScanCache(
        index_dir / FILE_NAME, cache_key(cfg_fp, cfg.max_file_bytes), store.collection
    )

    with timed(report, "scan", time.perf_counter):
        progress.start("scan", None)
        stored = store.documents()
        loaded: list[LoadedDocument] = []
        skipped: list[SkippedFile] = []
        unchanged_files: list[UnchangedFile] = []
        known = scan_cache.known(stored)
        followed: list[Path] = []
        for item in scan(root, cfg.max_file_bytes, allowed_roots, known=known, followed=followed):
            if isinstance(item, SkippedFile):
                skipped.append(item)
            elif isinstance(item, UnchangedFile):
                unchanged_files.append(item)
            else:
                loaded.append(item)
            progress.advance("scan")
        progress.finish("scan")
        cached_keys = [key for f in unchanged_files for key in f.keys]
        linked = sorted({str(p) for p in followed})
        before = json.loads(store.get_meta(_linked_key(root)) or "[]")
        roots = [root, *map(Path, {*linked, *before})]  # a link removed since: its files too
        # Other types and hidden names are reported, but are no reason to keep a stored
        # document (one of a file that failed to load this time is kept).
        failed = [s for s in skipped if s.kind not in NOT_PROBLEMS]
        work = plan(loaded, failed, stored, roots, cfg_fp, store.collection, cached_keys)
    report.skipped = [Skip(s.source, s.reason, s.kind) for s in skipped]
    report.unchanged = work.unchanged
    report.changed = sorted(work.changed_ids)
    report.new = [d for d, _ in work.to_index if d not in work.changed_ids]
    report.removed = work.removed_ids
    scanned = {document_id(store.collection, k) for k in [d.key for d in loaded] + cached_keys}
    change = plan_model_change(store, cfg.models, stored, scanned | set(work.removed_ids))
    # Snapshots of what each write removes, stored with it, for the incremental edge stage.
    journal = JournalWriter(store, stored)

    if work.removed_ids:
        with timed(report, "write", time.perf_counter):
            _remove(store, work.removed_ids, cfg, journal.record(work.removed_ids, [], analyzer))

    if change.changing and (work.to_index or change.stale):
        mark_changing(store)
        journal.rebuild_all()  # every vector changes, so does every SEMANTIC list
    dimension, stale = 0, list(change.stale)
    if work.to_index:
        for stage in INDEX_STAGES:
            progress.start(stage, len(work.to_index))
        progress.start(CHUNKS_EMBEDDED, None)
        size = cfg.batch_documents
        batches = [work.to_index[s : s + size] for s in range(0, len(work.to_index), size)]
        built_batches = build_batches(
            build_chunks, batches, cfg, report, progress, models=models, analyzer=analyzer
        )
        indexed: set[str] = set()
        with closing(built_batches):
            for batch, built in zip(batches, built_batches, strict=True):
                _write_batch(store, built, work.changed_ids, cfg, report, journal, analyzer)
                dimension = dimension or vector_dimension(built)
                indexed.update(rec.id for rec, _ in built)
                progress.advance("write", len(batch))
        for stage in (*INDEX_STAGES, CHUNKS_EMBEDDED):
            progress.finish(stage)
        # Documents that failed to build are in report.skipped, not among the indexed.
        report.new = [d for d in report.new if d in indexed]
        report.changed = [d for d in report.changed if d in indexed]
        if change.changing:  # their stored versions hold the replaced model's vectors
            stale += sorted(work.changed_ids - indexed)
    if stale:  # documents from other paths (or failed ones), embedded by the model replaced
        models = models or IngestModels(cfg.models, cfg.device)
        with timed(report, "embed", time.perf_counter):
            progress.start("re-embed", len(stale))
            reembed_documents(store, stale, cfg, models.embedder)
            progress.finish("re-embed")
        report.reembedded = stale
    if work.to_index or stale:
        if not dimension:  # no chunk vector was written (empty or skipped documents)
            models = models or IngestModels(cfg.models, cfg.device)
            dimension = models.embedder.dimension
        write_stamp(store, ModelStamp.configured(cfg.models, dimension))
        # The query side's export, made while the model is at hand (once per model), so
        # the first question after this ingest does not load PyTorch for it.
        models = models or IngestModels(cfg.models, cfg.device)
        ensure_export(cfg.models, lambda: models.embedder)

    if linked != before:
        store.set_meta(_linked_key(root), json.dumps(linked))
    scan_cache.update(
        root,
        [(d, document_hash(d, cfg_fp)) for d in loaded],
        unchanged_files,
        store.documents(),
        {d.source for d in loaded} | {f.source for f in unchanged_files},
        [s.source for s in failed],
    )
    scan_cache.save()
    refresh_derived(
        store, cfg, algorithms, index_dir, report, progress, analyzer=analyzer, force=rebuild
    )
    report.explain_nothing_indexed()
    return _finish(store, report)


def _write_batch(
    store: GraphStore,
    built: list[tuple[DocumentRecord, list[ChunkRecord]]],
    changed_ids: set[str],
    cfg: IngestConfig,
    report: IngestReport,
    journal: JournalWriter,
    analyzer: Analyzer,
) -> None:
    """One batch in one transaction: its built documents (replacing their old versions;
    a document that failed to build keeps its stored version), their chunks, the
    co-occurrence counts they add and remove, and the edge journal's entry for them."""
    with timed(report, "write", time.perf_counter):
        old_ids = [rec.id for rec, _ in built if rec.id in changed_ids]
        removed_tokens = store.chunk_tokens(old_ids) if old_ids else {}
        store.apply(
            GraphDelta(
                remove_doc_ids=old_ids,
                add=built,
                cooccurrence=cooccurrence_delta(
                    (c.tokens for _, cs in built for c in cs),
                    removed_tokens.values(),
                    cfg.tokens.cooccurrence_window,
                ),
                meta=journal.record(old_ids, [rec.id for rec, _ in built], analyzer),
            )
        )
    report.chunks_written += sum(len(cs) for _, cs in built)


def _remove(
    store: GraphStore, doc_ids: Sequence[str], cfg: IngestConfig, journal: dict[str, str]
) -> None:
    """Remove documents in one transaction, their co-occurrences decremented exactly and
    the edge journal's entry for them (`JournalWriter.record`) stored with them."""
    removed_tokens = store.chunk_tokens(doc_ids)
    store.apply(
        GraphDelta(
            remove_doc_ids=list(doc_ids),
            cooccurrence=cooccurrence_delta(
                [], removed_tokens.values(), cfg.tokens.cooccurrence_window
            ),
            meta=journal,
        )
    )


def _finish(store: GraphStore, report: IngestReport) -> IngestReport:
    status = store.status()
    report.chunks, report.tokens, report.edges = status.chunks, status.tokens, status.edges
    report.communities = status.communities
    report.graph_version = status.graph_version
    report.finished_at = time.time()
    return report


def remove_documents(
    doc_ids: Sequence[str],
    store: GraphStore,
    cfg: IngestConfig,
    algorithms: AlgorithmConfig,
    index_dir: Path,
    *,
    progress: Progress | None = None,
) -> IngestReport:
    """Delete the named documents of the store's collection (ids it does not hold are an
    error, so a typo deletes nothing) and bring the derived stages up to date."""
    progress = progress or NoProgress()
    stored = store.documents()
    unknown = [d for d in doc_ids if d not in stored]
    if unknown:
        raise UnknownDocument(
            f"no document {unknown[0]!r} in collection {store.collection!r}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
        )
    report = IngestReport(
        path="", backend=store.backend, collection=store.collection, started_at=time.time()
    )
    report.removed = sorted(set(doc_ids))
    analyzer = Analyzer(cfg.tokens)
    if report.removed:
        journal = JournalWriter(store, stored).record(report.removed, [], analyzer)
        with timed(report, "write", time.perf_counter):
            _remove(store, report.removed, cfg, journal)
    refresh_derived(store, cfg, algorithms, index_dir, report, progress, analyzer=analyzer)
    return _finish(store, report)


class UnknownDocument(NeoragError):
    pass


def refresh_derived(
    store: GraphStore,
    cfg: IngestConfig,
    algorithms: AlgorithmConfig,
    index_dir: Path,
    report: IngestReport,
    progress: Progress,
    *,
    analyzer: Analyzer | None = None,
    force: bool = False,
) -> None:
    """Bring chunk edges, analytics and the FAISS/BM25 files up to date if the stored
    documents changed since they were last built (or a previous run died before finishing
    them). Chunk edges follow the change (ingest/edges/maintain.py); analytics run a full
    pass or place the new chunks (ingest/analytics_refresh.py); the search files take the
    changed documents as a delta (ingest/indexes.py)."""
    documents = store.documents()
    fingerprint = corpus_fingerprint(documents, cfg)
    indexes_ok = SearchIndexes.published(index_dir, fingerprint)
    edges_pending = pending(store)
    derived_for = store.get_meta(DERIVED_KEY)
    if not force and derived_for == fingerprint and indexes_ok and not edges_pending:
        return
    report.derived_rebuilt = True
    analyzer = analyzer or Analyzer(cfg.tokens)
    # The search files first: the edge stage reads the changed corpus through them.
    with timed(report, "indexes", time.perf_counter):
        progress.start("indexes", None)
        report.indexes = refresh_indexes(
            store, index_dir, fingerprint, analyzer, cfg.index, rebuild=force, documents=documents
        )
        progress.finish("indexes")
    if force or edges_pending or derived_for != fingerprint:
        with timed(report, "edges", time.perf_counter):
            progress.start("chunk edges", None)
            workspace = EdgeWorkspace(index_dir / WORKSPACE_FILE)
            published = SearchIndexes.load(index_dir, fingerprint, cfg.index, verify=False)
            edges = refresh_chunk_edges(
                store,
                cfg.edges,
                analyzer,
                force=force,
                workspace=workspace,
                indexes=published,
                entity_labels=cfg.models.entity_labels,
            )
            progress.finish("chunk edges")
        report.edge_refresh, report.edge_source = edges.mode, edges.source
        for stage, seconds in edges.seconds.items():
            report.add_time(f"edges.{stage}", seconds)
        progress.start("analytics", None)
        incremental = edges.mode == "update"
        analytics = refresh_analytics(
            store,
            algorithms,
            cfg.analytics,
            added=edges.added if incremental else None,
            removed=len(edges.removed),
            full=force,
        )
        progress.finish("analytics")
        report.analytics_refresh = analytics.mode
        for stage, seconds in analytics.report.seconds.items():
            report.add_time(f"analytics.{stage}", seconds)
        if analytics.mode == "full":
            report.modularity = analytics.report.modularity
        report.warnings += analytics.report.warnings
    store.set_meta(DERIVED_KEY, fingerprint)
    # The query processes' copy of the token graph, derived once here and kept on this
    # machine's disk: a server started after this ingest maps it instead of reading it.
    with timed(report, "keep", time.perf_counter):
        store.keep_token_graph(algorithms)
