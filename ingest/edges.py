"""The chunk graph: six typed, weighted edge kinds and their fusion into RELATED.

Every kind is derived from stored per-chunk facts only (embedding, section path, entities,
links, questions, title), over the whole corpus, so the result after any sequence of
incremental ingests equals the result of a fresh ingest. Each weight is in [0, 1]. Edges
are stored once per unordered pair (src < dst), except NEXT and CITES, which point from the
earlier chunk / the citing chunk.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import sparse

from graph.types import RELATED, ChunkEdge, ChunkRecord
from ingest.config import EdgeConfig
from ingest.tokens import Analyzer

_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_MIN_TITLE_CHARS = 4
# Part of the corpus fingerprint: bump when an edge builder changes what it produces, so
# stored edges are rebuilt on the next ingest.
EDGE_BUILDER_VERSION = 2


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def semantic_edges(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> list[ChunkEdge]:
    """k nearest neighbours by cosine, truncated below `semantic_min_cosine`."""
    have = [c for c in chunks if c.embedding is not None]
    if len(have) < 2:
        return []
    emb = np.stack([c.embedding for c in have]).astype(np.float32)
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    k = min(cfg.semantic_k, len(have) - 1)
    best: dict[tuple[str, str], float] = {}
    for start in range(0, len(have), 1024):
        sims = emb[start : start + 1024] @ emb.T
        for row in range(sims.shape[0]):
            sims[row, start + row] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for row, cols in enumerate(top):
            a = have[start + row].id
            for col in cols:
                sim = float(sims[row, col])
                if sim >= cfg.semantic_min_cosine:
                    key = _pair(a, have[col].id)
                    best[key] = max(best.get(key, 0.0), min(sim, 1.0))
    return [ChunkEdge("SEMANTIC", a, b, w) for (a, b), w in sorted(best.items())]


def next_edges(chunks: Sequence[ChunkRecord]) -> list[ChunkEdge]:
    by_doc: dict[str, list[ChunkRecord]] = defaultdict(list)
    for c in chunks:
        by_doc[c.doc_id].append(c)
    out = []
    for doc_chunks in by_doc.values():
        doc_chunks.sort(key=lambda c: c.ordinal)
        out += [ChunkEdge("NEXT", a.id, b.id, 1.0) for a, b in itertools.pairwise(doc_chunks)]
    return out


def same_section_edges(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> list[ChunkEdge]:
    """Weight 1 for the same heading path, 0.5 for a shared parent heading; within a
    document, and only between chunks at most `section_max_chunks` ordinals apart."""
    by_doc: dict[str, list[ChunkRecord]] = defaultdict(list)
    for c in chunks:
        if c.section_path:
            by_doc[c.doc_id].append(c)
    best: dict[tuple[str, str], float] = {}
    for doc_chunks in by_doc.values():
        doc_chunks.sort(key=lambda c: c.ordinal)
        for i, a in enumerate(doc_chunks):
            for b in doc_chunks[i + 1 :]:
                if b.ordinal - a.ordinal > cfg.section_max_chunks:
                    break
                if a.section_path == b.section_path:
                    w = 1.0
                elif len(a.section_path) > 1 and a.section_path[:-1] == b.section_path[:-1]:
                    w = 0.5
                else:
                    continue
                key = _pair(a.id, b.id)
                best[key] = max(best.get(key, 0.0), w)
    return [ChunkEdge("SAME_SECTION", a, b, w) for (a, b), w in sorted(best.items())]


def shares_entity_edges(chunks: Sequence[ChunkRecord], cfg: EdgeConfig) -> list[ChunkEdge]:
    """Entity overlap weighted by entity rarity: Σ idf(shared) / min(Σ idf(a), Σ idf(b)).
    Entities in more than `entity_max_chunks` chunks carry no signal and are ignored; each
    chunk keeps its `entity_top_k` strongest partners."""
    holders: dict[str, set[str]] = defaultdict(set)
    for c in chunks:
        for e in c.entities:
            holders[e.name.casefold()].add(c.id)
    n = max(len(chunks), 1)
    idf = {
        name: math.log(1 + n / len(ids))
        for name, ids in holders.items()
        if 2 <= len(ids) <= cfg.entity_max_chunks
    }
    # Summed in sorted order: a hash-ordered set would make the float sums, and so the
    # top-k ties, differ between processes.
    mass = {
        c.id: sum(idf.get(name, 0.0) for name in sorted({e.name.casefold() for e in c.entities}))
        for c in chunks
    }
    shared: dict[tuple[str, str], float] = defaultdict(float)
    for name, weight in idf.items():
        ids = sorted(holders[name])
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                shared[(a, b)] += weight
    scored: dict[tuple[str, str], float] = {}
    for (a, b), s in shared.items():
        denom = min(mass[a], mass[b])
        if denom > 0:
            scored[(a, b)] = round(min(1.0, s / denom), 9)
    return [
        ChunkEdge("SHARES_ENTITY", a, b, w) for (a, b), w in _top_per_node(scored, cfg.entity_top_k)
    ]


def _top_per_node(
    scored: dict[tuple[str, str], float], k: int
) -> list[tuple[tuple[str, str], float]]:
    per_node: dict[str, list[tuple[float, tuple[str, str]]]] = defaultdict(list)
    for key, w in scored.items():
        per_node[key[0]].append((w, key))
        per_node[key[1]].append((w, key))
    keep: set[tuple[str, str]] = set()
    for items in per_node.values():
        items.sort(key=lambda x: (-x[0], x[1]))
        keep.update(key for _, key in items[:k])
    return sorted((key, scored[key]) for key in keep)


def _words(text: str) -> list[str]:
    """Words with a possessive 's removed, so "Palme's husband" names "Lisbeth Palme"."""
    return [w[:-2] if w.endswith(("'s", "’s")) else w for w in _WORDS.findall(text)]


def title_key(title: str) -> tuple[str, ...]:
    """A title as a case-sensitive word sequence, without a trailing "(disambiguation)"."""
    return tuple(_words(_PAREN.sub("", title)))


class TitleMatcher:
    """Finds documents' titles named in a text, longest match first.

    Case-sensitive by default (so the song "Changed It" is not found in "it changed"): that
    is how chunk text names other documents. `fold=True` matches case-insensitively, for
    questions, which are often cased arbitrarily ("Lothair Ii"); it then ignores titles that
    are a single short word or only stopwords, which would match everywhere."""

    def __init__(self, titles: dict[str, str], analyzer: Analyzer, *, fold: bool = False) -> None:
        self._by_first: dict[str, dict[tuple[str, ...], list[str]]] = defaultdict(dict)
        self.max_len = 0
        self.fold = fold
        stop = analyzer._stop
        for doc_id, title in titles.items():
            key = title_key(title)
            if not key or len("".join(key)) < _MIN_TITLE_CHARS:
                continue
            if fold:
                key = tuple(w.casefold() for w in key)
                if all(w in stop for w in key) or (len(key) == 1 and len(key[0]) < 6):
                    continue
            elif len(key) == 1 and (key[0].casefold() in stop or not key[0][:1].isupper()):
                continue
            self._by_first[key[0]].setdefault(key, []).append(doc_id)
            self.max_len = max(self.max_len, len(key))

    def find(self, text: str) -> dict[str, int]:
        words = _words(text.casefold() if self.fold else text)
        found: dict[str, int] = defaultdict(int)
        i = 0
        while i < len(words):
            options = self._by_first.get(words[i])
            step = 1
            if options:
                for length in range(min(self.max_len, len(words) - i), 0, -1):
                    ids = options.get(tuple(words[i : i + length]))
                    if ids:
                        for doc_id in ids:
                            found[doc_id] += 1
                        step = length
                        break
            i += step
        return dict(found)


def _link_targets(chunks: Sequence[ChunkRecord]) -> dict[str, str]:
    """Ways a link can name a document: its id, its title, its file name and stem."""
    targets: dict[str, str] = {}
    for c in chunks:
        if c.ordinal != 0:
            continue
        targets.setdefault(c.doc_id.casefold(), c.doc_id)
        if c.title:
            targets.setdefault(c.title.casefold(), c.doc_id)
        name = c.doc_id.rsplit("/", 1)[-1]
        targets.setdefault(name.casefold(), c.doc_id)
        targets.setdefault(name.rsplit(".", 1)[0].casefold(), c.doc_id)
    return targets


def _normalise_link(link: str) -> list[str]:
    link = link.split("#", 1)[0].split("?", 1)[0].strip().rstrip("/")
    last = link.rsplit("/", 1)[-1]
    options = [link, last, last.rsplit(".", 1)[0], last.replace("_", " ")]
    return [o.casefold() for o in options if o]


def cites_edges(chunks: Sequence[ChunkRecord], analyzer: Analyzer) -> list[ChunkEdge]:
    """A chunk cites a document when it links to it (weight 1) or names its title (0.8);
    the edge points at the cited document's first chunk."""
    first = {c.doc_id: c.id for c in chunks if c.ordinal == 0}
    titles = {c.doc_id: c.title for c in chunks if c.ordinal == 0 and c.title}
    matcher = TitleMatcher(titles, analyzer)
    targets = _link_targets(chunks)
    best: dict[tuple[str, str], float] = {}
    for c in chunks:
        cited: dict[str, float] = {}
        for link in c.links:
            for option in _normalise_link(link):
                if option in targets:
                    cited[targets[option]] = 1.0
                    break
        for doc_id in matcher.find(c.text):
            cited.setdefault(doc_id, 0.8)
        for doc_id, w in cited.items():
            if doc_id == c.doc_id or doc_id not in first:
                continue
            key = (c.id, first[doc_id])
            best[key] = max(best.get(key, 0.0), w)
    return [ChunkEdge("CITES", a, b, w) for (a, b), w in sorted(best.items())]


def utility_edges(
    chunks: Sequence[ChunkRecord], analyzer: Analyzer, cfg: EdgeConfig
) -> list[ChunkEdge]:
    """Cosine of TF-IDF vectors over each chunk's utility questions; top `utility_k` per
    chunk above `utility_min_similarity`."""
    docs = [(c.id, analyzer.tokens(" ".join(c.questions))) for c in chunks if c.questions]
    if len(docs) < 2:
        return []
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for i, (_, toks) in enumerate(docs):
        counts: dict[int, int] = defaultdict(int)
        for t in toks:
            counts[vocab.setdefault(t, len(vocab))] += 1
        for j, n in counts.items():
            rows.append(i)
            cols.append(j)
            vals.append(1.0 + math.log(n))
    m = sparse.csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)))
    df = np.bincount(m.indices, minlength=len(vocab))
    m = m.multiply(np.log((1 + len(docs)) / (1 + df)) + 1.0).tocsr()
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    m = sparse.diags(1.0 / np.maximum(norms, 1e-12)) @ m
    scored: dict[tuple[str, str], float] = {}
    for start in range(0, len(docs), 512):
        sims = (m[start : start + 512] @ m.T).toarray()
        for row in range(sims.shape[0]):
            i = start + row
            sims[row, i] = 0.0
            k = min(cfg.utility_k, len(docs) - 1)
            for j in np.argpartition(-sims[row], k - 1)[:k]:
                s = float(sims[row, j])
                if s >= cfg.utility_min_similarity:
                    key = _pair(docs[i][0], docs[j][0])
                    scored[key] = max(scored.get(key, 0.0), min(s, 1.0))
    return [ChunkEdge("UTILITY", a, b, w) for (a, b), w in sorted(scored.items())]


def related_edges(edges: Iterable[ChunkEdge], cfg: EdgeConfig) -> list[ChunkEdge]:
    """RELATED{weight} = Σ_kind α_kind · w_kind over an unordered pair, kept when ≥ τ."""
    fused: dict[tuple[str, str], float] = defaultdict(float)
    seen: set[tuple[str, str, str]] = set()
    for e in edges:
        a, b = _pair(e.src, e.dst)
        if (e.kind, a, b) in seen:
            continue
        seen.add((e.kind, a, b))
        fused[(a, b)] += cfg.alpha.get(e.kind, 0.0) * e.weight
    return [
        ChunkEdge(RELATED, a, b, round(w, 9)) for (a, b), w in sorted(fused.items()) if w >= cfg.tau
    ]


def build_chunk_edges(
    chunks: Sequence[ChunkRecord], cfg: EdgeConfig, analyzer: Analyzer
) -> dict[str, list[ChunkEdge]]:
    """All six kinds plus RELATED, keyed by kind (the order is the order of the report)."""
    kinds = {
        "SEMANTIC": semantic_edges(chunks, cfg),
        "NEXT": next_edges(chunks),
        "SAME_SECTION": same_section_edges(chunks, cfg),
        "SHARES_ENTITY": shares_entity_edges(chunks, cfg),
        "CITES": cites_edges(chunks, analyzer),
        "UTILITY": utility_edges(chunks, analyzer, cfg),
    }
    kinds[RELATED] = related_edges((e for es in kinds.values() for e in es), cfg)
    return kinds
