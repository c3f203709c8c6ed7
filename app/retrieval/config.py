"""Retrieval parameters with their defaults (the paper values where a paper gives one)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class FusionConfig(BaseModel):
    method: Literal["rrf", "weighted"] = "rrf"
    rrf_k: int = Field(60, ge=1)
    weights: dict[str, float] = Field(default_factory=lambda: {"dense": 1.0, "bm25": 1.0})


class TigragConfig(BaseModel):
    """TIGRAG: token PPR expansion, BM25-weighted candidate scoring, entity-driven hops."""

    gamma: int = Field(30, ge=1, description="top-γ expanded tokens kept after PPR")
    pool_mass: float = Field(0.8, gt=0.0, le=1.0, description="cumulative-mass pool threshold th")
    pool_min: int = Field(10, ge=1)
    pool_max: int = Field(100, ge=1)
    rerank: bool = True
    rerank_weight: float = Field(0.5, ge=0.0, le=1.0)
    hops: int = Field(2, ge=0, le=3)
    hop_chunks: int = Field(1, ge=1, description="ι: chunks whose entities drive the next hop")
    beta: int = Field(5, ge=1, description="final number of chunks")
    use_bm25: bool = True
    title_links: bool = Field(
        True, description="documents whose title the question or a hop entity names join the pool"
    )
    hop_rerank: Literal["joint", "sum"] = Field(
        "joint",
        description="rerank vectors per hop entity: joint = M(q ⊕ e) as in TIGRAG; "
        "sum = normalise(M(q) + M(e)), cheaper (short texts)",
    )
    hop_encoder: Literal["query", "int8"] = Field(
        "query",
        description="how the hop rerank vectors are encoded: with `query_encoder`, or with "
        "the ONNX export's MatMuls in int8 (about half the time per hop; docs/results.md, Speed)",
    )
    centrality: Literal["ppr", "degree"] = "ppr"
    named_on_top: bool = Field(
        True, description="the first chunks of documents the question names by title rank first"
    )
    hop_named_first: bool = Field(
        True,
        description="from the second hop on, when the question names two documents or more, "
        "expand one of them that no hop has expanded yet before the best-ranked chunk",
    )


class SpectragConfig(BaseModel):
    """SpectRAG: hybrid seeding, two-hop expansion, diffusion + spectral proximity, budgeted
    greedy selection."""

    seed_k: int = Field(40, ge=1, description="K ≫ k seeds from RRF(dense, bm25, utility)")
    expand_hops: int = Field(2, ge=0, le=3)
    expand_cap: int = Field(200, ge=1)
    budget_tokens: int = Field(1200, ge=64)
    core_size: int = Field(2, ge=0)
    a_relevance: float = 1.0
    b_proximity: float = 0.3
    c_cluster: float = 0.15
    d_document: float = 0.15
    lam_redundancy: float = 0.5
    rho_length: float = Field(0.3, ge=0.0, le=1.0)
    diffusion_weight: float = Field(0.3, ge=0.0, le=1.0)


class LiteragConfig(BaseModel):
    """LiteRAG: anchors, thresholded expansion, hub penalisation, reasoning chains."""

    anchors: int = Field(5, ge=1)
    threshold_floor: float = Field(0.3, ge=0.0, le=1.0)
    threshold_ratio: float = Field(0.6, ge=0.0, le=1.0)
    max_hops: int = Field(3, ge=1)
    max_nodes: int = Field(50, ge=1)
    hub_penalty: float = Field(0.5, ge=0.0)
    chain_budget_tokens: int = Field(2000, ge=64)
    fuzzy_min_ratio: float = Field(0.85, ge=0.0, le=1.0)


class BridgeConfig(BaseModel):
    """`bridge`: personalised PageRank over the passage–name graph, restarted from the
    question's dense passage scores and the names it contains (HippoRAG 2's passage nodes,
    with names the corpus knows in place of LLM-extracted triples)."""

    temperature: float = Field(
        0.02, gt=0.0, description="restart ∝ exp(cos / T) over the best dense passages"
    )
    restart_depth: int = Field(100, ge=1, description="dense passages in the restart vector")
    name_share: float = Field(
        0.3, ge=0.0, description="weight of the question's own names (∝ 1/df) in the restart"
    )
    damping: float = Field(0.85, gt=0.0, lt=1.0, description="probability of walking on")
    iterations: int = Field(15, ge=1)
    bounded_above: int = Field(
        2_000_000,
        ge=0,
        description="walk graphs with more relationships than this (chunk → name and back) "
        "run the push with `tolerance`; smaller ones the exact power iteration (2wiki-dev's "
        "has 0.24M, the 200k-chunk scale store's 6.7M)",
    )
    tolerance: float = Field(
        1e-7,
        ge=0.0,
        description="above `bounded_above`, a node passes its share on only while it holds "
        "more than this per relationship (0: exact); at 1e-7 the 200k-chunk scale store's "
        "walk keeps 99.4% of the exact top 100 in a third of the time "
        "(bench/out/findings/bridge-walk-200k.json)",
    )
    title_boost: float = Field(
        3.0, ge=0.0, description="a name leads to the passages it titles (1 + boost)× as often"
    )
    min_df: int = Field(
        1, ge=1, description="names in fewer chunks than this carry no mass out of a chunk"
    )
    max_name_share: float = Field(
        1.0, gt=0.0, le=1.0, description="names in more than this share of chunks are no bridge"
    )
    capitalised: bool = Field(
        False, description="link a chunk to a name only where its text writes it capitalised"
    )
    max_name_words: int = Field(6, ge=1)
    depth: int = Field(100, ge=1, description="passages in the ranking")


class RetrievalConfig(BaseModel):
    serving: Literal["in-process", "database"] = Field(
        "in-process",
        description=(
            "where queries read the search indexes: `in-process`, the collection's files "
            "mapped into each query process (fastest, one machine); `database`, Neo4j's "
            "vector and full-text indexes and GDS, so a query process holds nothing the "
            "size of the corpus and several can serve one cluster (neo4j backend; modes "
            "default (TIGRAG), tigrag, hybrid, dense, bm25: docs/operations.md)"
        ),
    )
    default_mode: str = "default"
    default_parts: tuple[Literal["tigrag", "literag", "bridge", "hybrid"], ...] = Field(
        ("tigrag", "bridge"),
        min_length=1,
        description="the modes `default` fuses by RRF (before the bridge mode: tigrag, literag)",
    )
    default_weights: dict[str, float] = Field(
        default_factory=dict, description="RRF weight per part of `default` (1 when absent)"
    )
    passage_match: Literal["auto", "on", "off"] = Field(
        "auto",
        description=(
            "add `hybrid` (dense + BM25) to `default`'s parts: `auto` does for a question "
            "whose graph-ranked first chunks mostly come from documents of "
            "`passage_match_chunks` chunks or more (long pages, where the graph finds the "
            "page and the question's own match finds the passage inside it)"
        ),
    )
    passage_match_chunks: float = Field(
        10.0,
        gt=0,
        description=(
            "a document this long is a page whose passages the context cannot all hold "
            "(twice the default top_k): 2wiki's passages reach 13 chunks for 4 of 6,119, "
            "sqlite-docs' pages 37 on average"
        ),
    )
    passage_match_weights: dict[str, float] = Field(
        default_factory=lambda: {"tigrag": 0.5},
        description=(
            "when passage match joins, these parts' RRF weights are multiplied by these "
            "factors: on long pages TIGRAG's token walk ranks pages well and passages "
            "poorly (set on sqlite-docs, checked on git-docs: docs/results.md, Ablations"
            "); the Wikipedia-shaped sets never take passage match"
        ),
    )
    passage_match_within_page: bool = Field(
        True,
        description=(
            "when passage match joins, the fusion still orders the pages, but each page's "
            "chunks come in hybrid's order (the passage matcher picks the passage)"
        ),
    )
    passage_match_page_evidence: float = Field(
        0.5,
        ge=0,
        description=(
            "when passage match joins, each chunk also scores its page's RRF (each part "
            "votes once per page, at its best chunk there), times this (0: off), so a page "
            "two parts rank first through different passages is not lost to the chunk-level "
            "split of its votes (set on git-docs, checked on sqlite-docs: docs/results.md, "
            "Ablations)"
        ),
    )
    passage_match_page_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description=(
            "when passage match joins, one document holds at most this share of the first "
            "`top_k` chunks (rounded up; 1: no limit), so a second page the question needs "
            "is not crowded out of the context by the first page's passages"
        ),
    )
    top_k: int = Field(5, ge=1)
    max_question_chars: int = Field(
        4000,
        ge=16,
        description="a longer question is truncated, with a trace note (the chat, the CLI); "
        "the API and MCP refuse it (`Settings.question_limit`)",
    )
    query_encoder: Literal["onnx", "onnx-int8", "torch"] = Field(
        "onnx",
        description=(
            "query-time embeddings: onnxruntime export of the model, the same with its "
            "MatMul weights in int8 (about half the encoding time), or PyTorch"
        ),
    )
    refresh_wait_seconds: float = Field(
        10.0,
        ge=0,
        description=(
            "after a re-ingest publishes a new index, how long the API and the chat wait for "
            "it to be loaded and warmed before answering from the previous one meanwhile"
        ),
    )
    fusion: FusionConfig = Field(default_factory=FusionConfig)
    tigrag: TigragConfig = Field(default_factory=TigragConfig)
    spectrag: SpectragConfig = Field(default_factory=SpectragConfig)
    literag: LiteragConfig = Field(default_factory=LiteragConfig)
    bridge: BridgeConfig = Field(default_factory=BridgeConfig)
