"""The bridge graph of an engine's published index (`bridge_graph`), kept beside the search
indexes, so an engine that starts loads it instead of building it.

Building the graph reads every chunk and matches every known name in it: 2.9 s of the
4.4 s an engine needs before its first answer on 2wiki-dev's 7.5k chunks
(`bench/out/latency/warm-up-2wiki-dev.json`), and it grows with the corpus. The graph is a
pure function of the published index, so it is written once per index version (one file
per parameter set, holding the version it was built for) and read back by every later
start of that version. A start on a newer version derives its graph from the stored one
by what changed (`update_bridge_graph`, equal to a fresh build), as a long-running engine
does from the graph in its memory. Arrays and JSON in one `.npz` (no pickle); a file of
another format or that cannot be read is ignored, and one that cannot be written is only
a slower next start.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from app.retrieval.bridge_graph import BridgeGraph, NameMatcher, UpdateState, make_graph

if TYPE_CHECKING:
    from app.retrieval.base import RetrievalContext

log = logging.getLogger(__name__)

FORMAT = 2  # bump when the graph's contents change meaning (2: update state as arrays)


def bridge_graph(engine: RetrievalContext, max_words: int, capitalised: bool) -> BridgeGraph:
    """The graph of the engine's published index, built once per index version (no store
    round trip: the FAISS and BM25 objects are replaced whenever the corpus changes),
    derived from the newest graph of an earlier version when there is one: in memory, or
    the one kept beside the indexes."""
    key = (max_words, capitalised)
    previous = engine.latest_derived("bridge graph", key)
    return engine.derived("bridge graph", key, lambda: _kept_or_made(engine, previous, key))


def _kept_or_made(
    engine: RetrievalContext, previous: BridgeGraph | None, key: tuple[int, bool]
) -> BridgeGraph:
    path = graph_file(engine.index_folder, *key)
    if previous is None:
        stored = load_graph(path, *key)
        if stored is not None:
            version, graph = stored
            if version == engine.version:
                return graph
            previous = graph
    graph = make_graph(engine, previous, key)
    if engine.version is not None:
        save_graph(path, graph, engine.version, key[0])
    return graph


def graph_file(folder: Path, max_words: int, capitalised: bool) -> Path:
    return folder / f"bridge-graph-w{max_words}-c{int(capitalised)}.npz"


def save_graph(path: Path, graph: BridgeGraph, version: str, max_words: int) -> None:
    names = {n: j for j, n in enumerate(graph.names)}
    meta = {
        "format": FORMAT,
        "version": version,
        "max_words": max_words,
        "capitalised": graph.capitalised,
        "chunk_ids": graph.chunk_ids,
        "names": graph.names,
    }
    # The update state as arrays (one row of name numbers per chunk) and one JSON member,
    # so a start that never updates parses neither into Python objects.
    gives = graph.state.gives
    rows = [sorted(names[n] for n in gives.get(c, ())) for c in graph.chunk_ids]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    given = np.fromiter((j for r in rows for j in r), np.int64, int(indptr[-1]))
    mentions, titles = graph.mentions.tocoo(), graph.titles.tocoo()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            np.savez(
                fh,
                meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                mention_rows=mentions.row,
                mention_cols=mentions.col,
                title_rows=titles.row,
                title_cols=titles.col,
                gives_indptr=indptr,
                gives_names=given,
                doc_titles=np.frombuffer(json.dumps(graph.state.doc_titles).encode(), np.uint8),
            )
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("bridge graph: cannot keep %s (%s); the next start builds it", path, exc)


def load_graph(path: Path, max_words: int, capitalised: bool) -> tuple[str, BridgeGraph] | None:
    """(the index version it was built for, the graph), or None."""
    try:
        with np.load(path, allow_pickle=False) as found:
            meta = json.loads(found["meta"].tobytes())
            arrays = {k: found[k] for k in found.files if k != "meta"}
    except (OSError, ValueError, KeyError):
        return None
    if meta.get("format") != FORMAT or meta["max_words"] != max_words:
        return None
    if meta["capitalised"] != capitalised:
        return None
    chunk_ids, names = list(meta["chunk_ids"]), list(meta["names"])
    shape = (len(chunk_ids), len(names))

    def state() -> tuple[dict[str, frozenset[str]], dict[str, int], dict[str, str]]:
        indptr, given = arrays["gives_indptr"], arrays["gives_names"]
        gives = {
            c: frozenset(names[j] for j in given[indptr[i] : indptr[i + 1]].tolist())
            for i, c in enumerate(chunk_ids)
        }
        counts = np.bincount(given, minlength=len(names))
        givers = {n: int(k) for n, k in zip(names, counts.tolist(), strict=True) if k}
        return gives, givers, dict(json.loads(arrays["doc_titles"].tobytes()))

    graph = BridgeGraph(
        chunk_ids,
        {c: i for i, c in enumerate(chunk_ids)},
        names,
        {n: j for j, n in enumerate(names)},
        _matrix(arrays["mention_rows"], arrays["mention_cols"], shape),
        _matrix(arrays["title_rows"], arrays["title_cols"], shape),
        NameMatcher(set(names), max_words),
        capitalised,
        UpdateState(load=state),
    )
    return str(meta["version"]), graph


def _matrix(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sparse.csr_matrix:
    """In the canonical form `_Entries.matrices` gives (sorted indices, ones)."""
    m = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.sort_indices()
    return m
