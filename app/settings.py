"""The one place the environment and `.env` are read.

Every setting is `NEORAG_<NAME>` (nested ones `NEORAG_<GROUP>__<NAME>`, e.g.
`NEORAG_RETRIEVAL__TIGRAG__GAMMA=40`), except the Neo4j connection, which also answers to
the conventional `NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD` and `NEO4J_DATABASE`. Defaults
live in the typed configs of graph/, ingest/ and app/retrieval/; this model only nests them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.retrieval.config import RetrievalConfig
from graph.collections import DEFAULT_COLLECTION, check_collection
from graph.config import AlgorithmConfig, Neo4jConfig
from graph.errors import NeoragError
from ingest.config import IngestConfig

_NEO4J = Neo4jConfig.model_fields


class LlmConfig(BaseModel):
    """Optional answer generation through a langchain-core chat model. `none` means the
    answer is extractive: the best evidence sentences, cited."""

    provider: Literal["none", "ollama", "openai"] = Field(
        "none",
        description="`none`: extractive answers from the offline reader; `ollama`: "
        "Ollama's own API; `openai`: any OpenAI-compatible endpoint (OpenAI, vLLM, "
        "llama.cpp's server, LiteLLM)",
    )
    model: str = Field("", description="the chat model's name, e.g. `llama3.1`, `gpt-4o-mini`")
    base_url: str = Field(
        "",
        description="the model server's URL; empty: `http://127.0.0.1:11434` for `ollama`, "
        "`https://api.openai.com/v1` for `openai`",
    )
    api_key: SecretStr = Field(
        SecretStr(""), description="the model server's API key (`openai`); never logged"
    )
    temperature: float = Field(0.0, description="sampling temperature of the chat model")
    timeout: float = Field(60.0, description="seconds to wait for the chat model per request")
    max_retries: int = Field(2, ge=0, description="retries of a failed chat-model request")


SCOPES = ("read", "ingest", "admin")  # each includes the ones before it


@dataclass(frozen=True, slots=True)
class ApiKey:
    secret: str = field(repr=False)
    scope: str  # what it grants: app/access.py


def parse_keys(text: str) -> tuple[ApiKey, ...]:
    """`key[:scope],…` → keys (scope `admin` when not given). Error messages never echo a
    key: they name the position of the bad entry."""
    found = []
    for n, entry in enumerate((e.strip() for e in text.split(",")), start=1):
        if not entry:
            continue
        secret, _, scope = entry.rpartition(":") if ":" in entry else (entry, "", "admin")
        scope = scope.strip() or "admin"
        if scope not in SCOPES:
            raise ValueError(
                f"key #{n} has an unknown scope; use key or key:scope with scope "
                f"{', '.join(SCOPES)}"
            )
        if len(secret.strip()) < 8:
            raise ValueError(f"key #{n} is shorter than 8 characters")
        found.append(ApiKey(secret.strip(), scope))
    return tuple(found)


class ApiConfig(BaseModel):
    """`neorag api`: the HTTP (and MCP-over-HTTP) service. `keys` is
    `NEORAG_API__KEYS=key[:scope],…`; when set, every /v1 route and /mcp need
    `Authorization: Bearer <key>`. `workers` query processes each hold their own engine
    behind one queue (the retrieval is CPU-bound Python, so threads alone do not use a
    second core)."""

    host: str = Field(
        "127.0.0.1",
        description="address `neorag api` binds (`--host`); another than loopback without "
        "`keys` prints a warning",
    )
    port: int = Field(8000, ge=1, le=65535, description="port `neorag api` listens on (`--port`)")
    workers: int = Field(
        2,
        ge=1,
        le=64,
        description="query processes behind the one HTTP process, each with its own engine "
        "(`--workers`)",
    )
    compute_threads: int = Field(
        0,
        ge=0,
        le=256,
        description="numeric threads (BLAS, FAISS, torch, onnxruntime) per query process; "
        "0: the cores divided by `workers`; `OMP_NUM_THREADS`, when set, wins",
    )
    keys: SecretStr = Field(
        SecretStr(""),
        description="API keys, `key[:scope],…` with scope `read`, `ingest` or `admin` "
        "(`admin` when none is given; 8+ characters); empty: every route is open",
    )
    # None: the retrieval's `max_question_chars`. Never above it: a longer question would
    # be truncated there, so the API and MCP refuse it instead (`Settings.question_limit`).
    max_question_chars: int | None = Field(
        None,
        ge=16,
        description="longest question the API and MCP accept (400 beyond it); unset: "
        "`NEORAG_RETRIEVAL__MAX_QUESTION_CHARS`, which it can only lower",
    )
    max_upload_bytes: int = Field(
        20 * 1024 * 1024,
        ge=1024,
        description="largest file `POST /v1/documents` takes (413 beyond)",
    )
    root_path: str = Field(
        "", description="the path prefix a reverse proxy serves the API under, e.g. `/neorag`"
    )
    warm_jobs: bool = Field(
        True,
        description="run ingest jobs in a worker process that keeps its models loaded between "
        "jobs (a busy worker's next job gets a process of its own); off: a new process per job",
    )
    warm_jobs_idle_seconds: float = Field(
        900.0,
        gt=0,
        description="seconds the warm job worker waits for a job before it exits and frees "
        "its memory (the next job starts it again)",
    )
    url: str = Field(
        "",
        description="a running `neorag api` that `neorag ask` sends its questions and "
        "`neorag ingest` its changes to (a job of that server), e.g. `http://127.0.0.1:8000` "
        "(its models are loaded: no process start); empty: run in the command's own process",
    )
    client_key: SecretStr = Field(
        SecretStr(""), description="the key `neorag ask` sends to `url` when its routes need one"
    )
    client_timeout: float = Field(
        120.0, gt=0, description="seconds `neorag ask` waits for the API at `url`"
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="browser origins allowed to call the API, comma-separated; none unless named",
    )
    mcp_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="`Host` headers `/mcp` accepts besides loopback (DNS-rebinding "
        "protection), comma-separated: a reverse proxy's name, e.g. `rag.example.org:443`",
    )

    @field_validator("keys")
    @classmethod
    def _keys_parse(cls, value: SecretStr) -> SecretStr:
        parse_keys(value.get_secret_value())
        return value

    @field_validator("cors_origins", "mcp_allowed_hosts", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    def api_keys(self) -> tuple[ApiKey, ...]:
        return parse_keys(self.keys.get_secret_value())


class CypherConsoleConfig(BaseModel):
    """Bounds on every ad-hoc Cypher statement (`neorag cypher` and any adapter calling
    app/cypher_service.py): the server stops it after `timeout_seconds`, and at most
    `max_rows` rows come back. `NEORAG_CYPHER__TIMEOUT_SECONDS`, `NEORAG_CYPHER__MAX_ROWS`."""

    timeout_seconds: float = Field(
        60.0, gt=0, description="seconds the server may spend on one statement (`--timeout`)"
    )
    max_rows: int = Field(1000, ge=1, description="rows returned at most (`--max-rows`)")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="NEORAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        env_nested_delimiter="__",
        extra="ignore",
        populate_by_name=True,
    )

    backend: Literal["embedded", "neo4j"] = Field(
        "embedded",
        description="`embedded` (SQLite + in-process algorithms, no server) or `neo4j` "
        "(Neo4j + GDS); `--backend` overrides it",
    )
    data_dir: Path = Field(
        Path(".neorag"),
        description="local state: the embedded stores, the search-index files (also for "
        "Neo4j), run logs, jobs and uploads, one folder per collection",
    )
    collection: str = Field(
        DEFAULT_COLLECTION,
        description="the collection commands, the chat and the API use unless told "
        "(`--collection`): 1-64 of `a-z 0-9 _ -`, starting with a letter or digit",
    )
    neo4j_uri: str = Field(
        _NEO4J["uri"].default,
        validation_alias=AliasChoices("NEO4J_URI", "NEORAG_NEO4J_URI"),
        description="the Neo4j server: `bolt://` for one server, `neo4j://` to route in a cluster",
    )
    neo4j_user: str = Field(
        _NEO4J["user"].default,
        validation_alias=AliasChoices("NEO4J_USER", "NEORAG_NEO4J_USER"),
        description="the Neo4j user",
    )
    neo4j_password: SecretStr = Field(
        _NEO4J["password"].default,
        validation_alias=AliasChoices("NEO4J_PASSWORD", "NEORAG_NEO4J_PASSWORD"),
        description="the Neo4j password (`make neo4j-start` writes one to "
        "`.neo4j/dev/password`); never logged",
    )
    neo4j_database: str = Field(
        _NEO4J["database"].default,
        validation_alias=AliasChoices("NEO4J_DATABASE", "NEORAG_NEO4J_DATABASE"),
        description="the Neo4j database every collection lives in",
    )
    neo4j_gds_uri: str = Field(
        _NEO4J["gds_uri"].default,
        validation_alias=AliasChoices("NEO4J_GDS_URI", "NEORAG_NEO4J_GDS_URI"),
        description="a cluster's GDS member as a direct `bolt://` address: projections and "
        "algorithms run there; empty: the member `NEO4J_URI` routes writes to",
    )
    neo4j_connection_timeout: float = Field(
        _NEO4J["connection_timeout"].default,
        gt=0,
        validation_alias=AliasChoices(
            "NEO4J_CONNECTION_TIMEOUT", "NEORAG_NEO4J_CONNECTION_TIMEOUT"
        ),
        description="seconds to wait for Neo4j to answer a connection, and to retry a "
        "transaction while it does not: how long a question waits before saying the "
        "server is down",
    )
    answer_min_confidence: float = Field(
        0.55,
        ge=0.0,
        le=1.0,
        description="the offline reader's short answer is shown only when the calibrated "
        "probability that it is right (app/reader/confidence.py) is at or above this; below "
        "it the answer says no short answer is supported and cites the closest sentences. "
        "0 always shows one",
    )
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    algorithms: AlgorithmConfig = Field(default_factory=AlgorithmConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    llm: LlmConfig = Field(default_factory=LlmConfig)
    cypher: CypherConsoleConfig = Field(default_factory=CypherConsoleConfig)
    api: ApiConfig = Field(default_factory=ApiConfig)

    @field_validator("collection")
    @classmethod
    def _collection_name(cls, value: str) -> str:
        return check_collection(value)

    @model_validator(mode="after")
    def _database_serving_ranks_in_gds(self) -> Settings:
        """Under database serving, token PageRank runs in GDS for queries, so ingests
        project the token graph when they publish it (not on a query's first use)."""
        if self.retrieval.serving != "database":
            return self
        if self.algorithms.token_ppr == "local":
            raise ValueError(
                "retrieval.serving=database runs token PageRank in GDS; "
                "algorithms.token_ppr=local keeps it in process"
            )
        if self.algorithms.token_ppr == "auto":
            self.algorithms = self.algorithms.model_copy(update={"token_ppr": "gds"})
        return self

    @cached_property
    def neo4j(self) -> Neo4jConfig:
        return Neo4jConfig(
            uri=self.neo4j_uri,
            user=self.neo4j_user,
            password=self.neo4j_password,
            database=self.neo4j_database,
            gds_uri=self.neo4j_gds_uri,
            connection_timeout=self.neo4j_connection_timeout,
        )

    @property
    def question_limit(self) -> int:
        """The longest question the API and MCP accept: the retrieval's limit, or the API's
        own bound when lower. A question the retrieval would truncate is refused instead,
        so no caller's question is cut without being told."""
        own = self.api.max_question_chars
        limit = self.retrieval.max_question_chars
        return limit if own is None else min(own, limit)

    @property
    def backend_dir(self) -> Path:
        """Per-backend state: one folder per collection under `collections/`."""
        return self.data_dir / self.backend

    @property
    def collection_dir(self) -> Path:
        """This collection's local state: the embedded store, FAISS and BM25 files (also
        for Neo4j, built from the database), the run log and the ingest lock."""
        return self.backend_dir / "collections" / self.collection

    @property
    def uploads_dir(self) -> Path:
        """Where the chat and the API keep uploaded files, one folder per collection."""
        return self.data_dir / "uploads" / self.collection

    def ingest_roots(self) -> list[Path]:
        """Folders the chat and the API may ingest from (resolved): the configured ones, or
        the data dir's uploads and the working directory."""
        roots = self.ingest.allowed_roots or [self.data_dir / "uploads", Path.cwd()]
        return [Path(r).expanduser().resolve() for r in roots]

    def for_collection(self, collection: str) -> Settings:
        """The same settings bound to another collection (validated)."""
        return self.model_copy(update={"collection": check_collection(collection)})

    def redacted(self) -> dict[str, object]:
        """Settings as shown to people: secrets are masked by SecretStr."""
        return self.model_dump(mode="json")


def _variable(loc: tuple[Any, ...]) -> str:
    aliases = {"neo4j_uri": "NEO4J_URI", "neo4j_user": "NEO4J_USER"}
    aliases |= {"neo4j_password": "NEO4J_PASSWORD", "neo4j_database": "NEO4J_DATABASE"}
    aliases |= {"neo4j_gds_uri": "NEO4J_GDS_URI"}
    aliases |= {"neo4j_connection_timeout": "NEO4J_CONNECTION_TIMEOUT"}
    if len(loc) == 1 and loc[0] in aliases:
        return aliases[str(loc[0])]
    return "NEORAG_" + "__".join(str(p) for p in loc if not isinstance(p, int)).upper()


def describe(error: ValidationError) -> str:
    """One line naming the variable, the value given and what is allowed."""
    first = error.errors()[0]
    name = _variable(tuple(first.get("loc", ())))
    given = first.get("input")
    secret = any(word in name.lower() for word in ("password", "key"))
    shown = "" if isinstance(given, dict) or secret else f"={given!r}"
    ctx = first.get("ctx") or {}
    allowed = ctx.get("expected")
    reason = f"expected {allowed}" if allowed else str(first.get("msg", "invalid value"))
    reason = reason.removeprefix("Value error, ")
    return f"invalid setting {name}{shown}: {reason}"


class SettingsError(NeoragError):
    pass


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and `.env`; a bad value is one SettingsError line
    naming the variable and the allowed values, never a pydantic traceback."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(describe(exc)) from None
