"""The one place the environment and `.env` are read.

Every setting is `NEORAG_<NAME>` (nested ones `NEORAG_<GROUP>__<NAME>`, e.g.
`NEORAG_RETRIEVAL__TIGRAG__GAMMA=40`), except the Neo4j connection, which also answers to
the conventional `NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD` and `NEO4J_DATABASE`. Defaults
live in the typed configs of graph/, ingest/ and app/retrieval/; this model only nests them.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.retrieval.config import RetrievalConfig
from graph.config import AlgorithmConfig, Neo4jConfig
from ingest.config import IngestConfig

_NEO4J = Neo4jConfig.model_fields


class LlmConfig(BaseModel):
    """Optional answer generation through a langchain-core chat model. `none` means the
    answer is extractive: the best evidence sentences, cited."""

    provider: Literal["none", "ollama", "openai"] = "none"
    model: str = ""
    base_url: str = ""
    api_key: SecretStr = SecretStr("")
    temperature: float = 0.0
    timeout: float = 60.0


class CypherConsoleConfig(BaseModel):
    """Bounds on every ad-hoc Cypher statement (`neorag cypher` and any adapter calling
    app/cypher_service.py): the server stops it after `timeout_seconds`, and at most
    `max_rows` rows come back. `NEORAG_CYPHER__TIMEOUT_SECONDS`, `NEORAG_CYPHER__MAX_ROWS`."""

    timeout_seconds: float = Field(60.0, gt=0)
    max_rows: int = Field(1000, ge=1)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="NEORAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        env_nested_delimiter="__",
        extra="ignore",
        populate_by_name=True,
    )

    backend: Literal["embedded", "neo4j"] = "embedded"
    data_dir: Path = Path(".neorag")
    neo4j_uri: str = Field(
        _NEO4J["uri"].default, validation_alias=AliasChoices("NEO4J_URI", "NEORAG_NEO4J_URI")
    )
    neo4j_user: str = Field(
        _NEO4J["user"].default, validation_alias=AliasChoices("NEO4J_USER", "NEORAG_NEO4J_USER")
    )
    neo4j_password: SecretStr = Field(
        _NEO4J["password"].default,
        validation_alias=AliasChoices("NEO4J_PASSWORD", "NEORAG_NEO4J_PASSWORD"),
    )
    neo4j_database: str = Field(
        _NEO4J["database"].default,
        validation_alias=AliasChoices("NEO4J_DATABASE", "NEORAG_NEO4J_DATABASE"),
    )
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    algorithms: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    llm: LlmConfig = Field(default_factory=LlmConfig)
    cypher: CypherConsoleConfig = Field(default_factory=CypherConsoleConfig)

    @cached_property
    def neo4j(self) -> Neo4jConfig:
        return Neo4jConfig(
            uri=self.neo4j_uri,
            user=self.neo4j_user,
            password=self.neo4j_password,
            database=self.neo4j_database,
        )

    @property
    def backend_dir(self) -> Path:
        """Per-backend state (SQLite store, FAISS and BM25 files, run log)."""
        return self.data_dir / self.backend

    def redacted(self) -> dict[str, object]:
        """Settings as shown to people: secrets are masked by SecretStr."""
        return self.model_dump(mode="json")
