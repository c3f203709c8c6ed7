"""Typed configuration for storage backends and graph algorithms (built by app.settings)."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class Neo4jConfig(BaseModel):
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str = "neo4j"
    connection_timeout: float = Field(5.0, gt=0)
    query_timeout: float = Field(60.0, gt=0)
    write_batch_size: int = Field(5000, ge=100)


class AlgorithmConfig(BaseModel):
    """Parameters shared by GDS and the embedded implementations, so both compute the same thing."""

    ppr_damping: float = Field(0.85, gt=0.0, lt=1.0)
    ppr_max_iterations: int = Field(10, ge=1)
    ppr_tolerance: float = Field(1e-7, gt=0.0)
    token_min_weight: int = Field(
        2,
        ge=1,
        description="CO_OCCURS edges lighter than this stay stored but are left out of the "
        "token graph PPR runs on (GDS projection and in-memory alike)",
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
