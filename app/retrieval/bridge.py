"""`bridge`: personalised PageRank over the passage–name graph (`bridge_graph`), restarted
from the question's dense passage scores and the names the question contains.

A multi-hop question names its first passage but not its second: "Who is the sibling of the
actress who played Susan Walker in Miracle on 34th Street?" finds the film's cast list, and
the passage that answers ("an early screen appearance from Lana Wood, the sister of Natalie
Wood") shares nothing with the question but the name Natalie Wood, which it shares with the
cast list. The walk goes passage → name → passage, so mass the question puts on the cast
list reaches every passage naming someone in it, most of all the passages of rare names.

  restart r: passages ∝ exp(cos(q, c) / T) over the `restart_depth` best dense hits, plus
             the question's names ∝ 1/df(name), `name_share` of the whole;
  walk:      passage → name ∝ 1/√df(name) (a rare name is a specific bridge), name →
             passage uniformly, (1 + title_boost)× towards the passages the name titles (a
             name leads first to the page about it);
  scores:    p = (1 − d)·r + d·W·p, `iterations` times from p = r; passages rank by p.
             Above `bounded_above` relationships, computed by pushing only from the nodes
             that hold more than `tolerance` per relationship, so that a question's work
             stops growing with the corpus.

This is an in-process computation on both backends (the graph is built from data every
store exposes); GDS 2.13's PageRank cannot take weighted restarts.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy import sparse

from app.retrieval.base import Query, Retriever, ScoredChunk, Trace
from app.retrieval.bridge_files import bridge_graph
from app.retrieval.bridge_graph import BridgeGraph
from app.retrieval.config import BridgeConfig
from graph.algorithms.ppr import SenderColumns
from graph.topk import top_stable


class Restarts(NamedTuple):
    """The walk's restart vectors, over the graph's chunks and names, and the dense
    cosine of each restart chunk (reported as a signal)."""

    chunks: np.ndarray
    names: np.ndarray
    cosine: dict[str, float]


class BridgeWalk:
    """The walk's transition matrix (chunk → name, name → chunk) for one graph, title boost
    and name filter."""

    def __init__(
        self, graph: BridgeGraph, title_boost: float, min_df: int = 1, max_share: float = 1.0
    ) -> None:
        df = graph.name_df
        self.df = df
        # A name in more than max_share of all chunks ("film", "american") is no bridge.
        self.usable = df <= max_share * max(len(graph.chunk_ids), 1)
        # With min_df = 2 a name only one chunk contains (which leads nowhere but back) carries
        # nothing out; at 1 it keeps mass on its chunk, which measured better on MuSiQue.
        keep = self.usable & (df >= min_df)
        specific = sparse.diags(np.where(keep, 1.0 / np.sqrt(np.maximum(df, 1.0)), 0.0))
        weighted = (graph.mentions @ specific).tocsr()
        out = np.asarray(weighted.sum(axis=1)).ravel()
        # chunk → name, rows summing to 1 (a chunk without names keeps nothing to send)
        to_names = sparse.diags(np.divide(1.0, out, out=np.zeros_like(out), where=out > 0))
        chunk_to_name = (to_names @ weighted).T.tocsr().astype(np.float32)
        towards = (
            (graph.mentions + title_boost * graph.titles)
            @ sparse.diags(self.usable.astype(np.float64))
        ).tocsr()
        into = np.asarray(towards.sum(axis=0)).ravel()
        to_chunks = sparse.diags(np.divide(1.0, into, out=np.zeros_like(into), where=into > 0))
        # name → chunk, columns summing to 1
        name_to_chunk = (towards @ to_chunks).tocsr().astype(np.float32)
        # One square matrix over chunks then names, by sender, for the push.
        self.chunks = len(graph.chunk_ids)
        self.matrix = sparse.bmat([[None, name_to_chunk], [chunk_to_name, None]], format="csr")

    @cached_property
    def senders(self) -> SenderColumns:
        """The matrix by column, for the push: built on the first walk that pushes (a
        second copy of the matrix, which a small graph's exact walk never needs)."""
        return SenderColumns(self.matrix)

    def run(
        self, chunk_restart: np.ndarray, name_restart: np.ndarray, cfg: BridgeConfig
    ) -> np.ndarray:
        """PPR scores of the chunks; both restart vectors are distributions (or zero).

        Up to `bounded_above` relationships, the power iteration p = (1 − d)·r + d·W·p
        from p = r, one float32 mat-vec a step. Above it, the same sum written as its series,
        p = (1 − d)·Σₖ xₖ + x_T with xₖ = (d·W)ᵏ·r, k < T = `iterations`, where a node passes
        its share on only while it exceeds `tolerance` × its relationships (the local-push
        rule of Andersen, Chung and Lang): what stays behind is at most that much per
        relationship, and a step's work is bounded by the mass the restart spreads, not by
        the graph's size. Small graphs keep the mat-vec: its few large operations share the
        cores better with the default's other part than a push's many small ones."""
        d = cfg.damping
        total = chunk_restart.sum() + cfg.name_share * name_restart.sum()
        if total <= 0:
            return np.zeros_like(chunk_restart)
        r = np.concatenate([chunk_restart, cfg.name_share * name_restart]) / total
        if cfg.tolerance == 0 or self.matrix.nnz <= cfg.bounded_above:
            r32 = r.astype(np.float32)
            p = r32.copy()
            for _ in range(cfg.iterations):
                p = (1 - d) * r32 + d * (self.matrix @ p)
            return p[: self.chunks].astype(np.float64)
        x, scores = r, (1 - d) * r
        limit = cfg.tolerance * self.senders.counts
        for step in range(1, cfg.iterations + 1):
            active = x > limit
            senders = np.flatnonzero(active)
            if not len(senders):
                break
            outgoing = np.where(active, x, 0.0)
            moved = self.senders.product(outgoing, senders)
            if moved is None:  # most nodes send: one mat-vec, in the matrix's float32
                moved = self.matrix @ outgoing.astype(np.float32)
            x = d * moved
            scores += (1 - d if step < cfg.iterations else 1.0) * x
        return scores[: self.chunks]


class BridgeRetriever(Retriever):
    name = "bridge"

    @property
    def bcfg(self) -> BridgeConfig:
        return self.cfg.bridge

    def walk(self) -> tuple[BridgeGraph, BridgeWalk]:
        """The published graph and its transition matrices (built once per title boost and
        min_df)."""
        graph = bridge_graph(self.engine, self.bcfg.max_name_words, self.bcfg.capitalised)
        key = (self.bcfg.title_boost, self.bcfg.min_df, self.bcfg.max_name_share)
        with graph.walk_lock:  # per graph: a new version's walk does not hold up this one's
            walk = graph.walks.get(key)
            if walk is None:
                walk = graph.walks[key] = BridgeWalk(graph, *key)
        return graph, walk

    def warm(self) -> None:
        self.walk()

    def restarts(self, query: Query, trace: Trace) -> Restarts:
        """Where the walk restarts: the question's best dense passages ∝ exp(cos / T) and
        its own names ∝ 1/df, each a distribution (or zero)."""
        cfg = self.bcfg
        graph, walk = self.walk()
        with trace.step("dense restart", depth=cfg.restart_depth):
            hits = self.engine.dense.search(query.embedding, cfg.restart_depth)
        chunks = np.zeros(len(graph.chunk_ids))
        if hits:
            top = max(s for _, s in hits)
            for c, s in hits:
                if (i := graph.chunk_index.get(c)) is not None:
                    chunks[i] = np.exp((s - top) / cfg.temperature)
            chunks /= chunks.sum()
        names = np.zeros(len(graph.names))
        with trace.step("question names") as info:
            own = [j for j in graph.names_in(self.engine.analyzer, query.text) if walk.usable[j]]
            if own:
                names[own] = 1.0 / np.maximum(walk.df[own], 1.0)
                names /= names.sum()
            info["names"] = [graph.names[j] for j in own]
        return Restarts(chunks, names, dict(hits))

    def _retrieve(self, query: Query, trace: Trace, k: int) -> list[ScoredChunk]:
        cfg = self.bcfg
        with trace.step("bridge graph") as info:
            graph, walk = self.walk()
            info.update(chunks=len(graph.chunk_ids), names=len(graph.names))
        if not graph.chunk_ids:
            return []
        restart = self.restarts(query, trace)
        cosine = restart.cosine
        with trace.step("bridge ppr", iterations=cfg.iterations, damping=cfg.damping) as info:
            scores = walk.run(restart.chunks, restart.names, cfg)
            order = top_stable(scores, cfg.depth)
            order = order[scores[order] > 0]
            info["ranked"] = len(order)
        trace.candidates = int((scores > 0).sum())
        return [
            ScoredChunk(
                graph.chunk_ids[i],
                float(scores[i]),
                {"ppr": float(scores[i])}
                | ({"cosine": cosine[graph.chunk_ids[i]]} if graph.chunk_ids[i] in cosine else {}),
            )
            for i in order
        ]
