"""An incremental edge update reads only what it touches (ingest/edges/indexed.py): the
changed documents from the store, every other chunk through the published search files, the
store's per-chunk reads and the workspace's link index. Its edges equal a fresh build
exactly, on both backends; without current indexes or link index it reads the whole corpus
from the store, and the link index is rewritten."""

from __future__ import annotations

from pathlib import Path

from graph.config import SearchIndexConfig
from ingest.config import ModelConfig
from ingest.edges.maintain import refresh_chunk_edges
from ingest.edges.workspace import FILE_NAME, EdgeWorkspace
from ingest.indexes import SearchIndexes
from tests.ingest.edge_corpora import ANALYZER, CFG, RandomCorpus, corpus_for, random_edit, write
from tests.ingest.test_edge_updates import assert_equals_fresh_build

LABELS = ModelConfig().entity_labels
SMALL_IVF = SearchIndexConfig(approximate_above=40)  # an IVF base, as at scale


class Round:
    """Publish the search files for the store as it is, then refresh its edges over them."""

    def __init__(self, store, folder: Path, config: SearchIndexConfig) -> None:
        self.store, self.folder, self.config, self.n = store, folder, config, 0
        self.workspace = EdgeWorkspace(folder / FILE_NAME)

    def refresh(self, *, indexes: bool = True, workspace: bool = True):  # type: ignore[no-untyped-def]
        self.n += 1
        key = f"k{self.n}"
        SearchIndexes.update(self.store, self.folder, key, ANALYZER, self.config)
        published = SearchIndexes.load(self.folder, key, self.config) if indexes else None
        return refresh_chunk_edges(
            self.store,
            CFG,
            ANALYZER,
            workspace=self.workspace if workspace else None,
            indexes=published,
            entity_labels=LABELS,
        )


def grown(store, seed: int, run: Round) -> RandomCorpus:
    corpus = corpus_for(store, seed)
    write(store, corpus, [corpus.new_doc() for _ in range(60)], [])
    first = run.refresh()
    assert (first.mode, first.source) == ("full", "store")
    assert run.workspace.path.exists()
    return corpus


def test_updates_over_the_indexes_equal_a_fresh_build(store, tmp_path: Path) -> None:
    for config, seed in ((SearchIndexConfig(), 41), (SMALL_IVF, 42)):
        run = Round(store, tmp_path / f"idx-{seed}", config)
        store.clear()
        corpus = grown(store, seed, run)
        runs = []
        for _ in range(8):
            random_edit(corpus, store)
            result = run.refresh()
            runs.append((result.mode, result.source))
            assert_equals_fresh_build(store)
        assert runs.count(("update", "indexes")) >= 6, runs
        assert ("update", "store") not in runs, runs


def test_semantic_partners_come_from_the_search_files(store, tmp_path, monkeypatch) -> None:
    """The partners' rows are the dense index's unit rows, not embeddings read back from
    the store (over Bolt on Neo4j, seconds at 50k chunks), and still score as a build."""
    run = Round(store, tmp_path / "idx", SMALL_IVF)
    corpus = grown(store, 45, run)
    asked: list[str] = []
    read = store.chunk_vectors

    def recorded(prop, ids):  # type: ignore[no-untyped-def]
        asked.extend(ids)
        return read(prop, ids)

    monkeypatch.setattr(store, "chunk_vectors", recorded)
    for _ in range(4):
        random_edit(corpus, store)
        assert run.refresh().source == "indexes"
        assert_equals_fresh_build(store)
    assert asked == []


def test_without_current_indexes_or_link_index_the_store_is_read(store, tmp_path: Path) -> None:
    run = Round(store, tmp_path / "idx", SearchIndexConfig())
    corpus = grown(store, 43, run)
    random_edit(corpus, store)
    plain = run.refresh(indexes=False)  # no search files: the whole corpus from the store
    assert (plain.mode, plain.source) == ("update", "store")
    assert_equals_fresh_build(store)
    random_edit(corpus, store)
    assert run.refresh(workspace=False).mode == "update"  # the link index is now stale
    random_edit(corpus, store)
    stale = run.refresh()
    assert (stale.mode, stale.source) == ("update", "store")
    assert_equals_fresh_build(store)
    random_edit(corpus, store)
    assert run.refresh().source == "indexes"  # rewritten by the read above
    assert_equals_fresh_build(store)
    run.workspace.path.write_bytes(b"not a database" * 100)
    random_edit(corpus, store)
    damaged = run.refresh()
    assert (damaged.mode, damaged.source) == ("update", "store")
    assert_equals_fresh_build(store)


def test_the_link_index_finds_the_chunks_that_link(embedded_store, tmp_path: Path) -> None:
    corpus = RandomCorpus(44)
    write(embedded_store, corpus, [corpus.new_doc() for _ in range(30)], [])
    chunks = embedded_store.corpus()
    workspace = EdgeWorkspace(tmp_path / FILE_NAME)
    workspace.replace(chunks, "stamp-1")
    assert workspace.current("stamp-1") and not workspace.current("stamp-2")
    linking = [c for c in chunks if c.links]
    assert linking
    target = linking[0].links[0]
    want = {c.id for c in chunks if EdgeWorkspace.link_options(c) & {target.casefold()}}
    assert workspace.linking({target.casefold()}) == want
    workspace.update([linking[0].id], [], "stamp-2")
    assert workspace.current("stamp-2")
    assert workspace.linking({target.casefold()}) == want - {linking[0].id}
