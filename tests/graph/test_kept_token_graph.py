"""The embedded store keeps the published token graph and its PageRank operator beside
itself: a later process maps those arrays instead of reading every co-occurrence row and
building the operator again, and gets the same graph and the same scores. A copy is used
only by the store and version it was kept for (graph/kept.py)."""

from __future__ import annotations

from pathlib import Path

from scipy import sparse

from graph.config import AlgorithmConfig
from graph.embedded.memory import PUBLISHED_KEY, MemoryGraphs
from graph.kept import STORE_ID, KeptGraph


class Source:
    """A store's token graph reads, counted."""

    def __init__(self, version: int, published: int | None, store_id: str | None = "s1") -> None:
        self.version, self.published, self.store_id, self.reads = version, published, store_id, 0
        rows, cols, weights = [0, 1, 0, 2], [1, 2, 2, 3], [3.0, 1.0, 2.0, 1.0]
        a = sparse.coo_matrix((weights, (rows, cols)), shape=(4, 4)).tocsr()
        self.adj = (a + a.T).tocsr()

    def get_meta(self, key: str) -> str | None:
        if key == STORE_ID:
            return self.store_id
        assert key == PUBLISHED_KEY
        return None if self.published is None else str(self.published)

    def graph_version(self) -> int:
        return self.version

    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        self.reads += 1
        return ["kell", "river", "sea", "veldt"], self.adj


def test_a_published_graph_is_kept_and_mapped_back(tmp_path: Path) -> None:
    kept = KeptGraph(tmp_path / "token-graph")
    first = Source(version=4, published=4)
    built = MemoryGraphs(first, kept)
    graph = built.token_graph(2)
    assert first.reads == 1 and (tmp_path / "token-graph" / "adj_data.npy").is_file()

    later = Source(version=4, published=4)
    loaded = MemoryGraphs(later, kept)
    again = loaded.token_graph(2)
    assert later.reads == 0, "the kept arrays were not used"
    assert again.texts == graph.texts
    assert (again.adjacency != graph.adjacency).nnz == 0
    assert not again.adjacency.data.flags.owndata  # a view of the mapped file, not a copy
    assert not again.operator.push.data.flags.owndata  # the operator too: nothing rebuilt
    cfg = AlgorithmConfig()
    assert loaded.token_ppr({"kell": 1.0}, cfg, 4) == built.token_ppr({"kell": 1.0}, cfg, 4)
    assert loaded.token_ppr({"veldt": 1.0}, cfg, 4) == built.token_ppr({"veldt": 1.0}, cfg, 4)


def test_another_version_store_or_weight_is_read_from_the_store(tmp_path: Path) -> None:
    kept = KeptGraph(tmp_path / "token-graph")
    MemoryGraphs(Source(version=4, published=4), kept).token_graph(2)
    rebuilt = Source(version=4, published=4, store_id="s2")  # a cleared store's new identity
    MemoryGraphs(rebuilt, kept).token_graph(2)
    assert rebuilt.reads == 1
    lighter = Source(version=4, published=4, store_id="s2")
    MemoryGraphs(lighter, kept).token_graph(1)  # another pruning: another operator
    assert lighter.reads == 1
    newer = Source(version=5, published=5)
    MemoryGraphs(newer, kept).token_graph(2)
    assert newer.reads == 1 and kept.load("s1:5:w2") is not None and kept.load("s1:4:w2") is None
    draft = Source(version=6, published=None)  # nothing published yet: not kept
    MemoryGraphs(draft, kept).token_graph(2)
    assert draft.reads == 1 and kept.load("s1:6:w2") is None and kept.load("s1:5:w2") is not None
    unnamed = Source(version=5, published=5, store_id=None)  # an older store: never kept
    MemoryGraphs(unnamed, kept).token_graph(2)
    assert unnamed.reads == 1 and kept.load("s1:5:w2") is not None
    (tmp_path / "token-graph" / "meta.json").write_text("{broken")
    assert kept.load("s1:5:w2") is None
