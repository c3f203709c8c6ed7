"""Search-index files brought up to date from the change equal a fresh build from the store,
on both backends; damaged, half-written or foreign files are never loaded; the IVF path
works above a (lowered) threshold. Documents are written straight into a real store, so
these tests need no models."""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

import ingest.index_files as index_files
from graph.config import SearchIndexConfig
from graph.dense import FLAT, IVF
from graph.embedded.store import EmbeddedStore
from graph.types import ChunkRecord, DocumentRecord, GraphDelta
from ingest.index_files import MANIFEST, Manifest, read_manifest
from ingest.indexes import SearchIndexes, _needs_new_kind
from ingest.tokens import Analyzer
from tests.conftest import DATASETS

ANALYZER = Analyzer()
DIM = 16
CONFIG = SearchIndexConfig(compact_fraction=0.3, max_segments=3)


class Corpus:
    """Documents made of 2Wiki passages (1–3 chunks each) with seeded random embeddings."""

    def __init__(self, seed: int) -> None:
        path = DATASETS / "2wiki-dev" / "corpus.jsonl"
        with path.open(encoding="utf-8") as fh:
            self.passages = [json.loads(line) for _, line in zip(range(1500), fh, strict=False)]
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.live: dict[str, str] = {}  # doc id -> content hash
        self.first: dict[str, int] = {}  # doc id -> its first passage
        self.version = 0

    def document(self, doc_id: str, same_text_as: int | None = None):
        self.version += 1
        first = self.rng.randrange(len(self.passages)) if same_text_as is None else same_text_as
        pieces = [
            self.passages[(first + i) % len(self.passages)] for i in range(self.rng.randint(1, 3))
        ]
        content = hashlib.sha256(f"{doc_id}:{first}:{self.version}".encode()).hexdigest()
        chunks = []
        for ordinal, p in enumerate(pieces):
            text = f"{p['title']}. {p['text']}"
            digest = hashlib.sha1(text.encode()).hexdigest()[:8]
            questions = (f"Who or what is {p['title']}?",) if self.rng.random() < 0.8 else ()
            chunks.append(
                ChunkRecord(
                    id=f"{doc_id}#{ordinal}-{digest}",
                    doc_id=doc_id,
                    ordinal=ordinal,
                    title=p["title"],
                    text=text,
                    tokens=tuple(ANALYZER.tokens(text)),
                    embedding=self.np_rng.normal(size=DIM).astype(np.float32),
                    questions=questions,
                )
            )
        self.live[doc_id], self.first[doc_id] = content, first
        return DocumentRecord(doc_id, f"/docs/{doc_id}", pieces[0]["title"], content), chunks

    def key(self) -> str:
        return hashlib.sha256(json.dumps(sorted(self.live.items())).encode()).hexdigest()[:24]


def seed_store(store, corpus: Corpus, n_docs: int) -> None:
    store.apply(GraphDelta(add=[corpus.document(f"doc{i:03d}") for i in range(n_docs)]))


def edit(store, corpus: Corpus, round_: int) -> None:
    """Remove a few documents, change a few (one keeps its text: same chunk ids, new hash),
    add a few."""
    rng = corpus.rng
    docs = sorted(corpus.live)
    removed = rng.sample(docs, rng.randint(0, 3))
    changed = rng.sample(sorted(set(docs) - set(removed)), rng.randint(1, 3))
    added = [f"new{round_}-{i}" for i in range(rng.randint(0, 4))]
    for d in removed:
        del corpus.live[d]
    # The first changed document gets its passages again: chunk ids repeat, the hash differs.
    rewrites = [
        corpus.document(d, same_text_as=corpus.first[d] if i == 0 else None)
        for i, d in enumerate(changed)
    ]
    fresh = [corpus.document(d) for d in added]
    store.apply(GraphDelta(remove_doc_ids=removed + changed, add=rewrites + fresh))


def assert_same_indexes(a: SearchIndexes, b: SearchIndexes) -> None:
    assert a.dense.ids == b.dense.ids and a.dense.kind == b.dense.kind
    assert np.array_equal(a.dense.vectors(a.dense.ids), b.dense.vectors(b.dense.ids))
    for x, y in ((a.lexical, b.lexical), (a.utility, b.utility)):
        assert x.chunk_ids == y.chunk_ids and x.vocabulary == y.vocabulary
        for term in x.vocabulary:  # bit for bit
            assert x.idf_of(term) == y.idf_of(term), term
            assert np.array_equal(x.scores([term]), y.scores([term])), term


def assert_scores_match(a: SearchIndexes, b: SearchIndexes, store, rng: random.Random) -> None:
    vocab = a.lexical.vocabulary
    queries = [rng.sample(vocab, rng.randint(1, 5)) for _ in range(12)]
    tokens = {c: list(t) for c, t in store.chunk_tokens(list(store.documents())).items()}
    reference = BM25Okapi([tokens[c] for c in a.lexical.chunk_ids])
    for q in queries:
        assert np.allclose(a.lexical.scores(q), b.lexical.scores(q), rtol=1e-9, atol=0)
        assert np.allclose(a.lexical.scores(q), reference.get_scores(q), rtol=1e-9, atol=1e-12)
    probe = np.random.default_rng(0).normal(size=(6, DIM)).astype(np.float32)
    assert a.dense.search_many(probe, 8) == b.dense.search_many(probe, 8)


def test_random_edits_update_equals_a_fresh_build(store, tmp_path: Path) -> None:
    corpus = Corpus(seed=21)
    seed_store(store, corpus, 60)
    directory = tmp_path / "idx"
    assert SearchIndexes.update(store, directory, corpus.key(), ANALYZER, CONFIG) == "full"
    modes = []
    for round_ in range(7):
        edit(store, corpus, round_)
        modes.append(SearchIndexes.update(store, directory, corpus.key(), ANALYZER, CONFIG))
        loaded = SearchIndexes.load(directory, corpus.key())
        assert loaded is not None
        fresh = SearchIndexes.build(store, tmp_path / f"fresh{round_}", corpus.key(), ANALYZER)
        assert_same_indexes(loaded, fresh)
        assert_scores_match(loaded, fresh, store, corpus.rng)
    assert "delta" in modes and "compacted" in modes and "full" not in modes, modes


class WholeCorpusForbidden(EmbeddedStore):
    """The real embedded store, refusing the whole-corpus reads a full build makes."""

    def corpus(self):
        raise AssertionError("an update must not read the whole corpus")

    def term_matrix(self):
        raise AssertionError("an update must not read the whole term matrix")


def test_an_update_reads_only_the_changed_documents(tmp_path: Path) -> None:
    corpus = Corpus(seed=5)
    with EmbeddedStore(tmp_path / "g.sqlite") as store:
        seed_store(store, corpus, 40)
        SearchIndexes.build(store, tmp_path / "idx", corpus.key(), ANALYZER, CONFIG)
        edit(store, corpus, 0)
    with WholeCorpusForbidden(tmp_path / "g.sqlite") as store:
        mode = SearchIndexes.update(store, tmp_path / "idx", corpus.key(), ANALYZER, CONFIG)
        assert mode == "delta"
        assert len(list((tmp_path / "idx").glob("seg-*.bin"))) == 2


def test_a_change_of_more_than_a_quarter_is_a_full_build(embedded_store, tmp_path) -> None:
    """A delta is for small changes: new chunks beyond `compact_fraction` (a quarter) of
    the indexed ones rebuild the files from the store, which equal a fresh build."""
    corpus = Corpus(seed=9)
    seed_store(embedded_store, corpus, 20)
    directory = tmp_path / "idx"
    SearchIndexes.build(embedded_store, directory, corpus.key(), ANALYZER, CONFIG)
    indexed = read_manifest(directory).chunks
    added = [corpus.document(f"more{i:03d}") for i in range(12)]
    embedded_store.apply(GraphDelta(add=added))
    assert sum(len(cs) for _, cs in added) > CONFIG.compact_fraction * indexed
    assert SearchIndexes.update(embedded_store, directory, corpus.key(), ANALYZER, CONFIG) == "full"
    assert len(read_manifest(directory).segments) == 1
    fresh = SearchIndexes.build(embedded_store, tmp_path / "fresh", corpus.key(), ANALYZER, CONFIG)
    loaded = SearchIndexes.load(directory, corpus.key())
    assert loaded is not None
    assert_same_indexes(loaded, fresh)


def test_a_collection_without_chunks_has_loadable_indexes(embedded_store, tmp_path) -> None:
    """A new, empty collection publishes files a reader loads (no dimension yet); its first
    documents then give the indexes a fresh build gives."""
    directory = tmp_path / "idx"
    assert SearchIndexes.update(embedded_store, directory, "empty", ANALYZER, CONFIG) == "full"
    empty = SearchIndexes.load(directory, "empty")
    assert empty is not None and len(empty.dense) == 0 and empty.lexical.chunk_ids == []
    corpus = Corpus(seed=8)
    seed_store(embedded_store, corpus, 5)
    SearchIndexes.update(embedded_store, directory, corpus.key(), ANALYZER, CONFIG)
    loaded = SearchIndexes.load(directory, corpus.key())
    fresh = SearchIndexes.build(embedded_store, tmp_path / "fresh", corpus.key(), ANALYZER)
    assert loaded is not None and len(loaded.dense) > 0
    assert_same_indexes(loaded, fresh)


def test_unchanged_documents_only_rekey(embedded_store, tmp_path: Path) -> None:
    corpus = Corpus(seed=6)
    seed_store(embedded_store, corpus, 10)
    directory = tmp_path / "idx"
    SearchIndexes.update(embedded_store, directory, "k1", ANALYZER, CONFIG)
    before = read_manifest(directory)
    assert SearchIndexes.update(embedded_store, directory, "k2", ANALYZER, CONFIG) == "unchanged"
    after = read_manifest(directory)
    assert after.key == "k2" and after.segments == before.segments
    assert SearchIndexes.load(directory, "k1") is None and SearchIndexes.published(directory, "k2")


def test_other_index_settings_mean_a_full_build(embedded_store, tmp_path: Path) -> None:
    corpus = Corpus(seed=7)
    seed_store(embedded_store, corpus, 10)
    directory = tmp_path / "idx"
    SearchIndexes.update(embedded_store, directory, "k", ANALYZER, CONFIG)
    edit(embedded_store, corpus, 0)
    other = SearchIndexes.update(
        embedded_store, directory, "k", ANALYZER, SearchIndexConfig(approximate_above=5)
    )
    assert other == "full" and len(read_manifest(directory).segments) == 1


def published_with_a_delta(store, corpus: Corpus, directory: Path) -> None:
    seed_store(store, corpus, 30)
    SearchIndexes.update(store, directory, "k0", ANALYZER, CONFIG)
    edit(store, corpus, 0)
    assert SearchIndexes.update(store, directory, "k1", ANALYZER, CONFIG) == "delta"


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(b"\0" * path.stat().st_size),  # same size, wrong bytes
        lambda path: path.write_bytes(path.read_bytes()[:-50]),  # truncated
        lambda path: path.unlink(),
    ],
    ids=["garbage", "truncated", "missing"],
)
@pytest.mark.parametrize("which", [0, 1], ids=["base", "delta"])
def test_a_damaged_segment_is_never_loaded(embedded_store, tmp_path: Path, damage, which) -> None:
    corpus = Corpus(seed=8)
    directory = tmp_path / "idx"
    published_with_a_delta(embedded_store, corpus, directory)
    damage(directory / read_manifest(directory).segments[which].file)
    assert SearchIndexes.load(directory, "k1") is None
    rebuilt = SearchIndexes.load_or_build(embedded_store, directory, "k1", ANALYZER, CONFIG)
    assert_same_indexes(rebuilt, SearchIndexes.load(directory, "k1"))
    assert rebuilt.dense.ids == sorted(c.id for c in embedded_store.corpus())


def test_a_damaged_manifest_means_a_full_build(embedded_store, tmp_path: Path) -> None:
    corpus = Corpus(seed=9)
    directory = tmp_path / "idx"
    published_with_a_delta(embedded_store, corpus, directory)
    (directory / MANIFEST).write_text('{"format": 2, "key": "k1"', encoding="utf-8")
    assert SearchIndexes.load(directory, "k1") is None
    assert not SearchIndexes.published(directory, "k1")
    assert SearchIndexes.update(embedded_store, directory, "k1", ANALYZER, CONFIG) == "full"
    assert SearchIndexes.load(directory, "k1") is not None


def test_a_crash_while_publishing_leaves_the_old_state(
    embedded_store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the delta segment is written but before the manifest is renamed into
    place: readers still get the old state whole; the next update redoes the change."""
    corpus = Corpus(seed=10)
    directory = tmp_path / "idx"
    seed_store(embedded_store, corpus, 30)
    SearchIndexes.update(embedded_store, directory, "k0", ANALYZER, CONFIG)
    old = SearchIndexes.load(directory, "k0")
    edit(embedded_store, corpus, 0)
    real_replace = os.replace

    def crash_on_manifest(src, dst):
        if Path(dst).name == MANIFEST:
            raise KeyboardInterrupt("killed")
        return real_replace(src, dst)

    monkeypatch.setattr(index_files.os, "replace", crash_on_manifest)
    with pytest.raises(KeyboardInterrupt):
        SearchIndexes.update(embedded_store, directory, "k1", ANALYZER, CONFIG)
    monkeypatch.setattr(index_files.os, "replace", real_replace)
    assert not list(directory.glob(".*.tmp"))  # the aborted manifest write cleaned up
    assert_same_indexes(SearchIndexes.load(directory, "k0"), old)
    assert SearchIndexes.update(embedded_store, directory, "k1", ANALYZER, CONFIG) == "delta"
    fresh = SearchIndexes.build(embedded_store, tmp_path / "fresh", "k1", ANALYZER)
    assert_same_indexes(SearchIndexes.load(directory, "k1"), fresh)


def test_garbage_collection_keeps_what_readers_may_still_open(
    embedded_store, tmp_path: Path
) -> None:
    corpus = Corpus(seed=11)
    directory = tmp_path / "idx"
    seed_store(embedded_store, corpus, 30)
    SearchIndexes.update(embedded_store, directory, "k", ANALYZER, CONFIG)
    (directory / ".seg.half-written.tmp").write_bytes(b"partial")
    for name in ("dense.faiss", "bm25.npz"):  # files of the format before segments
        (directory / name).write_bytes(b"old")
    files = []
    for round_ in range(6):
        edit(embedded_store, corpus, round_)
        SearchIndexes.update(embedded_store, directory, f"k{round_}", ANALYZER, CONFIG)
        files.append({s.file for s in read_manifest(directory).segments})
    manifest = read_manifest(directory)
    named = {f for s in manifest.segments for f in (s.file, *s.files)} | set(manifest.previous)
    assert any(name.startswith("vec-") for name in named)  # the base's FAISS file
    on_disk = {p.name for p in directory.iterdir() if p.name.startswith(("seg-", "vec-"))}
    assert on_disk >= named
    assert not (directory / "dense.faiss").exists() and not (directory / "bm25.npz").exists()
    later = time.time() + 2 * 3600  # past the grace period for segments and temp files
    deleted = index_files.collect_garbage(directory, manifest, now=later)
    left = {p.name for p in directory.iterdir() if p.name.startswith(("seg-", "vec-"))}
    assert left == named
    assert ".seg.half-written.tmp" in deleted and len(files) >= 2
    assert SearchIndexes.load(directory, "k5") is not None


def test_readers_during_updates_see_whole_states(embedded_store, tmp_path: Path) -> None:
    """A reader loading in a loop while updates publish sees, for every key it loads, the
    chunk set that key was published with: never a mix of two states."""
    corpus = Corpus(seed=12)
    directory = tmp_path / "idx"
    seed_store(embedded_store, corpus, 40)
    expected: dict[str, list[str]] = {}

    def publish(key: str) -> None:
        SearchIndexes.update(embedded_store, directory, key, ANALYZER, CONFIG)
        expected[key] = sorted(c.id for c in embedded_store.corpus())

    publish("k-start")
    stop = threading.Event()
    seen: list[tuple[str, list[str], list[str]]] = []

    def reader() -> None:
        while not stop.is_set():
            manifest = read_manifest(directory)
            if manifest is None:
                continue
            loaded = SearchIndexes.load(directory, manifest.key)
            if loaded is not None:
                seen.append((manifest.key, loaded.dense.ids, loaded.lexical.chunk_ids))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for round_ in range(8):
            edit(embedded_store, corpus, round_)
            publish(f"k{round_}")
    finally:
        stop.set()
        thread.join()
    assert len({key for key, _, _ in seen}) >= 2
    for key, dense_ids, lexical_ids in seen:
        assert dense_ids == lexical_ids == expected[key]


APPROXIMATE = SearchIndexConfig(
    approximate_above=150, ivf_nprobe=4, compact_fraction=0.3, max_segments=3
)


def test_above_the_threshold_updates_keep_an_ivf_index(embedded_store, tmp_path: Path) -> None:
    corpus = Corpus(seed=13)
    seed_store(embedded_store, corpus, 120)  # about 240 chunks
    directory = tmp_path / "idx"
    SearchIndexes.update(embedded_store, directory, "k", ANALYZER, APPROXIMATE)
    assert read_manifest(directory).dense_kind == IVF
    modes = []
    for round_ in range(5):
        edit(embedded_store, corpus, round_)
        modes.append(SearchIndexes.update(embedded_store, directory, "k", ANALYZER, APPROXIMATE))
        loaded = SearchIndexes.load(directory, "k", APPROXIMATE)
        exact = SearchIndexes.build(embedded_store, tmp_path / f"exact{round_}", "k", ANALYZER)
        assert loaded.dense.kind == IVF and exact.dense.kind == FLAT
        assert loaded.dense.ids == exact.dense.ids
        assert np.array_equal(
            loaded.dense.vectors(loaded.dense.ids), exact.dense.vectors(exact.dense.ids)
        )
        for term in loaded.lexical.vocabulary[::5]:
            assert np.array_equal(loaded.lexical.scores([term]), exact.lexical.scores([term]))
        queries = exact.dense.vectors(exact.dense.ids[::7])
        hits = loaded.dense.search_many(queries, 10)
        truth = exact.dense.search_many(queries, 10)
        overlap = [
            len({c for c, _ in h} & {c for c, _ in t}) for h, t in zip(hits, truth, strict=True)
        ]
        assert sum(overlap) / (10 * len(queries)) >= 0.6
    assert "full" not in modes and "delta" in modes, modes


def test_crossing_the_threshold_switches_the_index_kind(embedded_store, tmp_path: Path) -> None:
    corpus = Corpus(seed=14)
    seed_store(embedded_store, corpus, 60)
    directory = tmp_path / "idx"
    config = SearchIndexConfig(approximate_above=len(embedded_store.corpus()) + 2)
    SearchIndexes.update(embedded_store, directory, "k", ANALYZER, config)
    assert read_manifest(directory).dense_kind == FLAT
    embedded_store.apply(GraphDelta(add=[corpus.document(f"grow{i}") for i in range(3)]))
    assert SearchIndexes.update(embedded_store, directory, "k", ANALYZER, config) == "full"
    assert SearchIndexes.load(directory, "k").dense.kind == IVF


def test_a_reader_does_not_overwrite_a_writers_newer_files(embedded_store, tmp_path: Path) -> None:
    """Between an ingest publishing its files and recording its key in the store, a reader
    asks for the old key: it builds its indexes in memory and leaves the files alone."""
    corpus = Corpus(seed=15)
    seed_store(embedded_store, corpus, 20)
    directory = tmp_path / "idx"
    SearchIndexes.update(embedded_store, directory, "new-key", ANALYZER, CONFIG)
    before = (directory / MANIFEST).read_bytes()
    built = SearchIndexes.load_or_build(embedded_store, directory, "old-key", ANALYZER, CONFIG)
    assert (directory / MANIFEST).read_bytes() == before
    assert_same_indexes(built, SearchIndexes.load(directory, "new-key"))


def test_a_damaged_segment_found_while_compacting_means_a_full_build(
    embedded_store, tmp_path: Path
) -> None:
    corpus = Corpus(seed=16)
    directory = tmp_path / "idx"
    published_with_a_delta(embedded_store, corpus, directory)
    base = directory / read_manifest(directory).segments[0].file
    base.write_bytes(b"\0" * base.stat().st_size)  # same size: only the sha256 can tell
    edit(embedded_store, corpus, 1)
    squeeze = SearchIndexConfig(compact_fraction=0.3, max_segments=1)
    assert SearchIndexes.update(embedded_store, directory, "k2", ANALYZER, squeeze) == "full"
    fresh = SearchIndexes.build(embedded_store, tmp_path / "fresh", "k2", ANALYZER)
    assert_same_indexes(SearchIndexes.load(directory, "k2"), fresh)


def test_dropped_documents_are_found_by_bisection_or_by_scan() -> None:
    """The bisection shortcut for a few dropped documents agrees with the plain scan, also
    for document ids that contain "#" or prefix each other, and for chunk ids that do not
    start with their document's id (then the scan is used)."""
    from ingest.index_files import Segment
    from ingest.indexes import _surviving

    rng = random.Random(17)
    docs = [f"d{i}" for i in range(600)] + ["a#b", "a", "a#", "x/y#z"]
    pairs = sorted((f"{d}#{k}-{rng.randrange(16**8):08x}", d) for d in docs for k in range(3))
    odd = [(f"zz-{i}", "d7") for i in range(2)]  # chunks of d7 named another way
    for rows in (pairs, sorted(pairs + odd)):
        ids, owners = [c for c, _ in rows], [d for _, d in rows]
        seg = Segment("base", [], ids, owners, None, ids, None, ids, ids, {})  # type: ignore[arg-type]
        for dropped in ({"d7"}, {"a", "a#b"}, {"a#"}, {"x/y#z", "d100", "d10"}, set(), {"nope"}):
            expected = np.array([d not in dropped for d in owners])
            assert np.array_equal(_surviving(seg, set(dropped)), expected), dropped


def test_ivf_cells_retrain_when_the_corpus_doubles_or_halves() -> None:
    """Crossing `approximate_above` changes the dense index's kind; inside IVF, new cells
    are trained only once the corpus has grown or shrunk by `ivf_retrain_growth` (2)."""
    config = SearchIndexConfig(approximate_above=1000)
    flat = Manifest("k", {}, {}, {}, [], FLAT)
    assert not _needs_new_kind(flat, 1000, config)
    assert _needs_new_kind(flat, 1001, config)
    ivf = Manifest("k", {}, {}, {}, [], IVF, trained_size=4000)
    assert not any(_needs_new_kind(ivf, n, config) for n in (2001, 4000, 8000))
    assert _needs_new_kind(ivf, 8001, config) and _needs_new_kind(ivf, 1999, config)
    assert _needs_new_kind(ivf, 999, config)  # back below the threshold: exact again
