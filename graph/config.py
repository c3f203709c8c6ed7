"""Typed configuration for storage backends and graph algorithms (built by app.settings)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class Neo4jConfig(BaseModel):
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str = "neo4j"
    connection_timeout: float = Field(5.0, gt=0)
    query_timeout: float = Field(60.0, gt=0)
    write_batch_size: int = Field(5000, ge=100)
    # The member that holds GDS projections and runs the algorithms, when it is not the one
    # NEO4J_URI routes writes to (a cluster's dedicated GDS secondary): a direct bolt:// URI.
    gds_uri: str = ""


class AlgorithmConfig(BaseModel):
    """Parameters shared by GDS and the embedded implementations, so both compute the same thing."""

    ppr_damping: float = Field(0.85, gt=0.0, lt=1.0)
    ppr_max_iterations: int = Field(10, ge=1)
    ppr_tolerance: float = Field(1e-7, gt=0.0)
    ppr_send_rule: Literal["delta", "per_degree"] = Field(
        "delta",
        description="when a node sends in a PageRank superstep: `delta` when its delta "
        "exceeds the tolerance (GDS); `per_degree` when its delta per unit of degree does, "
        "the push rule of local PageRank approximations, which skips hubs whose share to "
        "each neighbour would be below the tolerance and bounds a run's work by "
        "mass/tolerance relationships (in-process runs only)",
    )
    token_min_weight: int = Field(
        2,
        ge=1,
        description="CO_OCCURS edges lighter than this stay stored but are left out of the "
        "token graph PPR runs on (GDS projection and in-memory alike)",
    )
    token_ppr: Literal["auto", "gds", "local"] = Field(
        "auto",
        description="where the Neo4j backend runs per-query token PPR: `gds` on the server's "
        "projection; `local` in the query process, on a copy of that projection loaded once "
        "per published version; `auto` local while the projection holds at most "
        "`local_ppr_max_relationships`, GDS above (the embedded backend is always local)",
    )
    local_ppr_max_relationships: int = Field(
        6_000_000,
        ge=0,
        description="largest token projection (relationships, both directions) `auto` copies "
        "into the query process. Measured on the 200k-chunk scale store's 4.76M: 278 MB "
        "resident per process, 1.1 GB more while loading (91 s, on a background thread: GDS "
        "answers meanwhile); its GDS route took 2.4 s p50 per default question (docs/results.md: "
        "Speed)",
    )
    token_ppr_bounded_above: int = Field(
        1_000_000,
        ge=0,
        description="token graphs with more relationships (both directions) than this run "
        "a bounded PageRank (`token_ppr_bounded_rule`), whose work per query is bounded by "
        "the seeds' mass rather than by the graph's size; the evaluation sets' graphs "
        "(at most 300k) run exactly, the 50k-chunk scale store's (1.47M) is bounded: its "
        "rankings' R@2 / R@5 / MRR stay the same and TIGRAG's p50 drops from 101 to 58 ms on "
        "Neo4j (docs/results.md, Speed)",
    )
    token_ppr_bounded_tolerance: float = Field(
        1e-5,
        gt=0.0,
        description="the `delta` rule's tolerance above `token_ppr_bounded_above` (and the "
        "GDS route's, which has no other rule): at 1e-5 the top-30 tokens of 2wiki-dev's "
        "200 questions overlap the exact run's by 95.5% "
        "(bench/out/findings/ppr-tolerance-2wiki-dev.json)",
    )
    token_ppr_bounded_rule: Literal["delta", "per_degree"] = Field(
        "per_degree",
        description="the in-process send rule above `token_ppr_bounded_above` "
        "(`ppr_send_rule`): `per_degree` with `token_ppr_per_degree_tolerance` bounds a "
        "run's work by the seeds' mass, not the graph; on the 200k-chunk scale store it "
        "leaves 2wiki-dev's R@2, R@5 and MRR unchanged in default and TIGRAG and takes "
        "TIGRAG's p50 from 205 to 69 ms (docs/results.md, Speed); the GDS route runs "
        "`delta`",
    )
    token_ppr_per_degree_tolerance: float = Field(
        3e-7,
        gt=0.0,
        description="above `token_ppr_bounded_above`, a token sends under the `per_degree` "
        "rule only while its delta exceeds this times its weighted degree",
    )
    leiden_seed: int = 42
    leiden_gamma: float = Field(1.0, gt=0.0)
    leiden_max_levels: int = Field(10, ge=1)
    leiden_tolerance: float = Field(1e-4, gt=0.0)
    fastrp_dimension: int = Field(64, ge=8)
    fastrp_seed: int = 42
    fastrp_iteration_weights: tuple[float, ...] = (0.0, 1.0, 1.0)
    fastrp_normalization_strength: float = 0.0
    spectral_dimension: int = Field(32, ge=2)
    concurrency: int = Field(1, ge=1)


class SearchIndexConfig(BaseModel):
    """The dense (FAISS) and lexical (BM25) search files kept beside the store.

    Below `approximate_above` chunks the dense index is an exact flat scan; above it, an
    IVF-Flat index (k-means cells over the unit vectors; a query scans the `ivf_nprobe`
    nearest cells), which supports removal by id so updates stay incremental. Updates are
    written as delta segments beside a base; the segments are folded into a new base once
    they hold more than `compact_fraction` of the base's chunks or number `max_segments`.
    """

    approximate_above: int = Field(
        50_000,
        ge=0,
        description="chunk count above which the dense index is IVF-Flat instead of exact",
    )
    ivf_nlist: int = Field(
        0, ge=0, description="IVF cells; 0 means about 4·√chunks (re-chosen when retrained)"
    )
    ivf_nprobe: int = Field(32, ge=1, description="IVF cells scanned per query")
    ivf_retrain_growth: float = Field(
        2.0,
        gt=1.0,
        description="retrain the IVF cells when the chunk count has grown or shrunk by this "
        "factor since they were trained",
    )
    compact_fraction: float = Field(0.25, gt=0.0, le=1.0)
    max_segments: int = Field(16, ge=1)
