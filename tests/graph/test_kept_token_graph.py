"""The embedded store keeps the published token graph beside itself: a later process maps
those arrays instead of reading every co-occurrence row, and gets the same graph."""

from __future__ import annotations

from pathlib import Path

from scipy import sparse

from graph.config import AlgorithmConfig
from graph.embedded.memory import PUBLISHED_KEY, KeptTokenGraph, MemoryGraphs


class Source:
    """A store's token graph reads, counted."""

    def __init__(self, version: int, published: int | None) -> None:
        self.version, self.published, self.reads = version, published, 0
        rows, cols, weights = [0, 1, 0], [1, 2, 2], [3.0, 1.0, 2.0]
        a = sparse.coo_matrix((weights, (rows, cols)), shape=(3, 3)).tocsr()
        self.adj = (a + a.T).tocsr()

    def get_meta(self, key: str) -> str | None:
        assert key == PUBLISHED_KEY
        return None if self.published is None else str(self.published)

    def graph_version(self) -> int:
        return self.version

    def token_graph(self) -> tuple[list[str], sparse.csr_matrix]:
        self.reads += 1
        return ["kell", "river", "sea"], self.adj


def test_a_published_graph_is_kept_and_mapped_back(tmp_path: Path) -> None:
    kept = KeptTokenGraph(tmp_path / "token-graph")
    first = Source(version=4, published=4)
    built = MemoryGraphs(first, kept)
    graph = built.token_graph(1)
    assert first.reads == 1 and (tmp_path / "token-graph" / "data.npy").is_file()

    later = Source(version=4, published=4)
    loaded = MemoryGraphs(later, kept)
    again = loaded.token_graph(1)
    assert later.reads == 0, "the kept arrays were not used"
    assert again.texts == graph.texts
    assert (again.adjacency != graph.adjacency).nnz == 0
    assert not again.adjacency.data.flags.owndata  # a view of the mapped file, not a copy
    cfg = AlgorithmConfig()
    assert loaded.token_ppr({"kell": 1.0}, cfg, 3) == built.token_ppr({"kell": 1.0}, cfg, 3)


def test_another_version_or_an_unpublished_one_is_read_from_the_store(tmp_path: Path) -> None:
    kept = KeptTokenGraph(tmp_path / "token-graph")
    MemoryGraphs(Source(version=4, published=4), kept).token_graph(1)
    newer = Source(version=5, published=5)
    MemoryGraphs(newer, kept).token_graph(1)
    assert newer.reads == 1 and kept.load(5) is not None and kept.load(4) is None
    draft = Source(version=6, published=None)  # nothing published yet: not kept
    MemoryGraphs(draft, kept).token_graph(1)
    assert draft.reads == 1 and kept.load(6) is None and kept.load(5) is not None
    (tmp_path / "token-graph" / "meta.json").write_text("{broken")
    assert kept.load(5) is None
