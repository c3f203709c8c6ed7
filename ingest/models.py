"""The models an ingest needs, loaded on first use: a re-ingest with nothing to do never
pays the few seconds it takes to load them."""

from __future__ import annotations

from functools import cached_property

from ingest.config import ModelConfig
from ingest.embed import Embedder, resolve_device
from ingest.entities import EntityExtractor
from ingest.query_model import OnnxEmbedder, ingest_embedder


class IngestModels:
    """`device` is the ingest `device` setting (auto, cpu or cuda), resolved when the
    embedding model loads."""

    def __init__(self, cfg: ModelConfig, device: str = "auto") -> None:
        self.cfg = cfg
        self.device = device

    @cached_property
    def embedder(self) -> OnnxEmbedder | Embedder:
        return ingest_embedder(self.cfg, resolve_device(self.device))

    @cached_property
    def extractor(self) -> EntityExtractor:
        return EntityExtractor(self.cfg.spacy_model, self.cfg.entity_labels)

    def count_tokens(self, text: str) -> int:
        return self.embedder.count_tokens(text)
