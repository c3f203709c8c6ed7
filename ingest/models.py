"""The models an ingest needs, loaded on first use: a re-ingest with nothing to do never
pays the few seconds it takes to load them."""

from __future__ import annotations

from functools import cached_property

from ingest.config import ModelConfig
from ingest.embed import Embedder, shared_embedder
from ingest.entities import EntityExtractor


class IngestModels:
    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg

    @cached_property
    def embedder(self) -> Embedder:
        return shared_embedder(self.cfg.embedding_model, self.cfg.embedding_batch_size)

    @cached_property
    def extractor(self) -> EntityExtractor:
        return EntityExtractor(self.cfg.spacy_model, self.cfg.entity_labels)

    def count_tokens(self, text: str) -> int:
        return self.embedder.count_tokens(text)
