"""docs/configuration.md, rendered from the settings model so it cannot drift from it.

    python -m app.settings_doc > docs/configuration.md      (or: make docs)

Every leaf field of `app.settings.Settings` becomes one row: its environment variable, type
(with its bounds), default and description. A description is the field's own
`Field(description=...)`; fields of the typed configs in graph/, ingest/ and
app/retrieval/ that have none yet take theirs from `NOTES` below (the test refuses a note for
a field that has its own description, so each field has one source). Secrets are never
rendered with a value.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import AliasChoices, BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import NoDecode

from app.settings import Settings

SECRET = "(secret, no default)"

# Descriptions of fields whose model (outside app/settings.py) gives none, keyed
# `ModelClass.field`. Prefer adding `description=` to the field itself and removing the note.
NOTES: dict[str, str] = {
    "IngestConfig.allowed_roots": "folders the chat and the HTTP API may ingest from, "
    "comma-separated (or a JSON list); empty: the data dir's `uploads/` and the working "
    "directory. The CLI is not bounded by it",
    "IngestConfig.max_file_bytes": "larger files are skipped with a reason",
    "IngestConfig.batch_documents": "documents per write transaction (and per worker batch)",
    "IngestConfig.workers": "processes that chunk, analyse and embed batches while the ingest "
    "process writes them in order; 1: all in one process",
    "IngestConfig.device": "where ingest embeds: `auto` (CUDA when torch sees a device, else "
    "the CPU), `cpu`, or `cuda` (an error without a device)",
    "ChunkingConfig.strategy": "`sentences` (windows of sentences), `tokens` (windows of "
    "tokens) or `markdown` (one chunk per section)",
    "ChunkingConfig.sentences_per_chunk": "`sentences`: sentences per window (TIGRAG's s)",
    "ChunkingConfig.sentence_overlap": "`sentences`: sentences shared by consecutive windows",
    "ChunkingConfig.window_tokens": "`tokens`: tokens per window at most",
    "ChunkingConfig.window_overlap": "`tokens`: tokens shared by consecutive windows at most",
    "ChunkingConfig.max_section_tokens": "`markdown`: a longer section is cut at sentence ends",
    "TokenConfig.min_length": "shorter tokens are not valid (not in the token graph or BM25)",
    "TokenConfig.cooccurrence_window": "valid tokens within this window co-occur (TIGRAG's w)",
    "EdgeConfig.semantic_k": "SEMANTIC: nearest neighbours kept per chunk",
    "EdgeConfig.semantic_min_cosine": "SEMANTIC: neighbours below this cosine are dropped",
    "EdgeConfig.entity_max_chunks": "SHARES_ENTITY: an entity in more chunks carries no signal",
    "EdgeConfig.entity_top_k": "SHARES_ENTITY: strongest partners kept per chunk",
    "EdgeConfig.utility_k": "UTILITY: most similar chunks (by their questions) kept per chunk",
    "EdgeConfig.utility_min_similarity": "UTILITY: pairs below this cosine are dropped",
    "EdgeConfig.section_max_chunks": "SAME_SECTION: only chunks at most this many ordinals apart",
    "EdgeConfig.alpha": "weight α of each edge kind in RELATED = Σ α·w, as a JSON object; "
    "setting it replaces the whole object, so give all six kinds",
    "EdgeConfig.tau": "RELATED pairs below this fused weight (τ) are dropped",
    "AnalyticsPolicy.full_below_chunks": "below this many chunks every ingest runs the full "
    "analytics pass",
    "AnalyticsPolicy.max_stale_share": "the full pass runs once the chunks added or removed "
    "since the last one exceed this share of the corpus; until then new chunks are placed "
    "by their neighbours",
    "ModelConfig.embedding_model": "a packaged sentence-transformers model or a local model "
    "folder; nothing is downloaded. Changing it re-embeds the collection at the next ingest",
    "ModelConfig.embedding_batch_size": "texts per embedding batch",
    "ModelConfig.spacy_model": "the spaCy pipeline for named entities",
    "ModelConfig.entity_labels": "spaCy entity labels kept as `Entity` nodes",
    "SearchIndexConfig.compact_fraction": "delta segments are folded into a new base once they "
    "hold this share of the base's chunks",
    "SearchIndexConfig.max_segments": "delta segments are folded into a new base once there "
    "are this many",
    "AlgorithmConfig.ppr_damping": "PageRank damping factor (both backends)",
    "AlgorithmConfig.ppr_max_iterations": "PageRank supersteps at most",
    "AlgorithmConfig.ppr_tolerance": "PageRank convergence tolerance",
    "AlgorithmConfig.leiden_seed": "Leiden's random seed (reproducible communities)",
    "AlgorithmConfig.leiden_gamma": "Leiden's resolution γ",
    "AlgorithmConfig.leiden_max_levels": "Leiden's levels at most",
    "AlgorithmConfig.leiden_tolerance": "Leiden's convergence tolerance",
    "AlgorithmConfig.fastrp_dimension": "FastRP embedding dimension of each chunk",
    "AlgorithmConfig.fastrp_seed": "FastRP's random seed",
    "AlgorithmConfig.fastrp_iteration_weights": "FastRP's weight per iteration",
    "AlgorithmConfig.fastrp_normalization_strength": "FastRP's degree normalisation exponent",
    "AlgorithmConfig.spectral_dimension": "smallest non-trivial Laplacian eigenvectors kept as "
    "each chunk's spectral coordinates",
    "AlgorithmConfig.concurrency": "GDS concurrency for Leiden, FastRP and PageRank (fixed, "
    "so results are reproducible)",
    "RetrievalConfig.default_mode": "the mode the chat's picker starts on",
    "RetrievalConfig.top_k": "chunks of context per question",
    "FusionConfig.method": "how `hybrid` fuses dense and BM25: `rrf` or `weighted` "
    "(min-max normalised scores)",
    "FusionConfig.rrf_k": "the k of reciprocal-rank fusion, 1 / (k + rank), in every RRF",
    "FusionConfig.weights": "`weighted` fusion: weight per signal (`dense`, `bm25`)",
    "TigragConfig.pool_min": "candidates kept in the pool at least",
    "TigragConfig.pool_max": "candidates kept in the pool at most",
    "TigragConfig.rerank": "rerank the pool by cosine to the question",
    "TigragConfig.rerank_weight": "share of the cosine in the reranked score (the rest is ρ)",
    "TigragConfig.hops": "entity-driven hops after the first round (h)",
    "TigragConfig.use_bm25": "score candidates by Σ p̂·BM25; false: by token presence",
    "TigragConfig.centrality": "`ppr`, or `degree` (weighted degree instead of PageRank)",
    "SpectragConfig.expand_hops": "RELATED hops from the seeds",
    "SpectragConfig.expand_cap": "candidate chunks after expansion at most",
    "SpectragConfig.budget_tokens": "the context's token budget B",
    "SpectragConfig.core_size": "most relevant chunks always selected (if they fit)",
    "SpectragConfig.a_relevance": "selection utility: weight a of relevance",
    "SpectragConfig.b_proximity": "selection utility: weight b of spectral proximity",
    "SpectragConfig.c_cluster": "selection utility: weight c of a community not yet covered",
    "SpectragConfig.d_document": "selection utility: weight d of a document not yet covered",
    "SpectragConfig.lam_redundancy": "selection utility: weight λ of redundancy",
    "SpectragConfig.rho_length": "selection utility divided by length^ρ",
    "SpectragConfig.diffusion_weight": "how much PPR diffusion over the candidate subgraph "
    "lifts chunks the seeds connect to",
    "LiteragConfig.anchors": "strongest chunks the expansion starts from",
    "LiteragConfig.threshold_floor": "lowest relevance threshold for keeping a neighbour",
    "LiteragConfig.threshold_ratio": "threshold = min(1, max(floor, ratio × anchor strength))",
    "LiteragConfig.max_hops": "expansion hops at most",
    "LiteragConfig.max_nodes": "explored chunks at most",
    "LiteragConfig.hub_penalty": "damping of propagation into high-degree chunks",
    "LiteragConfig.chain_budget_tokens": "token budget of the reasoning chains",
    "LiteragConfig.fuzzy_min_ratio": "fuzzy title/entity match: similarity ratio at least",
    "BridgeConfig.iterations": "power iterations of the walk",
    "BridgeConfig.max_name_words": "longest name (in words) linked into the walk graph",
}

PREAMBLE = """\
# Configuration

<!-- Generated by `python -m app.settings_doc` (`make docs`) from app/settings.py and the
typed configs it nests. Do not edit by hand: change the model and regenerate. -->

Every setting is read from the environment or from a `.env` file in the working directory,
by one pydantic-settings model (`app/settings.py`). Names start with `NEORAG_`; nested
settings join their path with `__` (`NEORAG_RETRIEVAL__TIGRAG__HOPS=1`). Names are not
case-sensitive. Lists, tuples and objects are given as JSON
(`NEORAG_RETRIEVAL__DEFAULT_PARTS='["tigrag","bridge"]'`), except where a row says
comma-separated. The Neo4j connection also answers to the conventional `NEO4J_*` names.

A bad value stops the command with one line naming the variable and what it accepts, e.g.
`invalid setting NEORAG_RETRIEVAL__TOP_K='abc': Input should be a valid integer`.
Command-line options (`--backend`, `--collection`, `--host`, `--port`, `--workers`,
`--timeout`, `--max-rows`) override their settings for one run.

Secrets (passwords, API keys) are never logged, shown in errors or written here.
"""

# Variables read outside the settings model: (names, read by, meaning).
OTHER_VARIABLES: list[tuple[str, str, str]] = [
    (
        "`NEORAG_CACHE`",
        "Makefile, `ops/neo4j/assemble.sh`, `ingest/query_model.py`",
        "cache folder for the dependency environment, the assembled Neo4j and (in `models`, "
        "unless `NEORAG_INGEST__MODELS__CACHE_DIR` says otherwise) the query encoder's export "
        "(default `~/.cache/neorag`; also `make CACHE=…`)",
    ),
    (
        "`NEORAG_SKIP_NEO4J`",
        "`make test`",
        "`1` skips the Neo4j-backed tests (reported as skipped, never as passed)",
    ),
    (
        "`NEO4J_RUN_DIR`",
        "`ops/neo4j/server.sh`",
        "the local server's conf, data and logs (default `.neo4j/dev`)",
    ),
    (
        "`NEO4J_BOLT_PORT`, `NEO4J_HTTP_PORT`",
        "`ops/neo4j/server.sh`",
        "the local server's ports (default 7687, 7474)",
    ),
    (
        "`NEO4J_HEAP`",
        "`ops/neo4j/server.sh`, `docker-compose.yml`",
        "the server's heap (default 2g)",
    ),
    (
        "`NEO4J_PAGECACHE`",
        "`ops/neo4j/server.sh`",
        "the server's page cache (default 512m)",
    ),
    (
        "`NEO4J_JAVA_OPTS`",
        "`ops/neo4j/server.sh`",
        "extra JVM flags for the server (the servers tests start and kill use "
        "`-XX:TieredStopAtLevel=1`)",
    ),
    (
        "`NEO4J_PASSWORD`",
        "`ops/neo4j/server.sh`, `docker-compose.yml`",
        "the password a server gets on its first start (`server.sh` generates one when "
        "unset; compose falls back to a local-only default)",
    ),
    (
        "`JAVA_HOME`",
        "`ops/neo4j/server.sh`",
        "a Java 17 or 21 runtime (default: `java` on `PATH`)",
    ),
    (
        "`FORWARDED_ALLOW_IPS`",
        "`neorag api`",
        "proxies whose `X-Forwarded-*` headers are trusted (default `127.0.0.1`)",
    ),
    (
        "`OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS`, `MKL_NUM_THREADS`",
        "ingest, `neorag api`",
        "numeric threads per process; when you set them they win over neorag's share",
    ),
]


@dataclass(frozen=True, slots=True)
class Row:
    path: tuple[str, ...]
    model: type[BaseModel]
    name: str
    field: FieldInfo

    @property
    def key(self) -> str:
        return f"{self.model.__name__}.{self.name}"


@dataclass(frozen=True, slots=True)
class Section:
    path: tuple[str, ...]
    model: type[BaseModel]
    rows: list[Row]


def _nested(field: FieldInfo) -> type[BaseModel] | None:
    kind = field.annotation
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def sections(model: type[BaseModel] = Settings, path: tuple[str, ...] = ()) -> Iterator[Section]:
    """The model's own leaf fields as one section, then each nested model's, depth first."""
    rows = [
        Row(path, model, name, field)
        for name, field in model.model_fields.items()
        if _nested(field) is None
    ]
    yield Section(path, model, rows)
    for name, field in model.model_fields.items():
        if (inner := _nested(field)) is not None:
            yield from sections(inner, (*path, name))


def rows() -> Iterator[Row]:
    for section in sections():
        yield from section.rows


def env_names(row: Row) -> list[str]:
    alias = row.field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return ["NEORAG_" + "__".join((*row.path, row.name)).upper()]


def is_secret(field: FieldInfo) -> bool:
    return field.annotation is SecretStr


def _comma_separated(field: FieldInfo) -> bool:
    return any(m is NoDecode for m in field.metadata)


def type_name(kind: Any) -> str:
    origin = get_origin(kind)
    args = get_args(kind)
    if origin is Literal:
        return " | ".join(f"`{a}`" for a in args)
    if origin in (Union, types.UnionType):
        inner = [type_name(a) for a in args if a is not type(None)]
        return " | ".join(inner) + (" or unset" if type(None) in args else "")
    if origin in (list, tuple):
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"object of {type_name(args[1])}" if len(args) == 2 else "object"
    if kind is SecretStr:
        return "secret"
    return _NAMES.get(kind, getattr(kind, "__name__", str(kind)))


_NAMES: dict[Any, str] = {
    Path: "path",
    str: "string",
    int: "integer",
    float: "number",
    bool: "`true` | `false`",
}
_BOUNDS = ((at.Ge, "ge", "≥"), (at.Gt, "gt", ">"), (at.Le, "le", "≤"), (at.Lt, "lt", "<"))


def type_cell(field: FieldInfo) -> str:
    text = type_name(field.annotation)
    bounds = [
        f"{sign} {_number(getattr(m, attr))}"
        for m in field.metadata
        for cls, attr, sign in _BOUNDS
        if isinstance(m, cls)
    ]
    if bounds:
        text += ", " + ", ".join(bounds)
    if _comma_separated(field):
        text += ", comma-separated"
    return text


def _number(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def default_cell(field: FieldInfo) -> str:
    if is_secret(field):
        return SECRET
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool | int | float):
        return f"`{_number(value)}`"
    if isinstance(value, Path):
        return f"`{value}`"
    if isinstance(value, str):
        return f"`{value}`" if value else "empty"
    if isinstance(value, list | tuple | dict):
        if not value:
            return "empty"
        if _comma_separated(field):
            return "`" + ",".join(str(v) for v in value) + "`"
        return f"`{json.dumps(value, separators=(',', ':'), ensure_ascii=False)}`"
    return f"`{value}`"


def description(row: Row) -> str:
    text = row.field.description or NOTES.get(row.key, "")
    return " ".join(text.split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _intro(model: type[BaseModel]) -> str:
    doc = model.__doc__ or ""
    if not doc.strip() or model.__doc__ == BaseModel.__doc__:
        return ""
    paragraphs = [" ".join(p.split()) for p in doc.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def _title(section: Section) -> str:
    if not section.path:
        return "## General and Neo4j connection"
    return f"## `{'.'.join(section.path)}` ({section.model.__name__})"


def render() -> str:
    out = [PREAMBLE]
    for section in sections():
        if not section.rows:
            continue
        out.append(_title(section) + "\n")
        if section.path and (intro := _intro(section.model)):
            out.append(intro + "\n")
        out.append("| variable | type | default | description |\n|---|---|---|---|")
        for row in section.rows:
            names = " or ".join(f"`{n}`" for n in env_names(row))
            cells = (names, type_cell(row.field), default_cell(row.field), description(row))
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        out.append("")
    out.append("## Other environment variables\n")
    out.append("Read outside the settings model, by the scripts and servers named.\n")
    out.append("| variable | read by | meaning |\n|---|---|---|")
    out.extend(f"| {names} | {reader} | {meaning} |" for names, reader, meaning in OTHER_VARIABLES)
    return "\n".join(out) + "\n"


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
