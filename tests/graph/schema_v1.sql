-- The embedded backend's durable state. One SQLite file; every ingest batch is one
-- transaction, so a killed process leaves either the old or the new state of a batch.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;

CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    ingested_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    section_path TEXT NOT NULL,
    n_tokens INTEGER NOT NULL,
    tokens TEXT NOT NULL,
    embedding BLOB,
    links TEXT NOT NULL,
    questions TEXT NOT NULL,
    community INTEGER,
    fastrp BLOB,
    spectral BLOB
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id, ordinal);

CREATE TABLE IF NOT EXISTS tokens (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE,
    df INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS has_token (
    chunk_id TEXT NOT NULL,
    token_id INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    PRIMARY KEY (chunk_id, token_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS has_token_token ON has_token (token_id);

-- One row per unordered pair, a = the token whose text sorts first.
CREATE TABLE IF NOT EXISTS cooccurs (
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    weight INTEGER NOT NULL,
    PRIMARY KEY (a, b)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS entities (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    label TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS mentions (
    chunk_id TEXT NOT NULL,
    entity_key TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (chunk_id, entity_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_entity ON mentions (entity_key);

CREATE TABLE IF NOT EXISTS chunk_edges (
    kind TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (src, kind, dst)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_edges_dst ON chunk_edges (dst, kind);
CREATE INDEX IF NOT EXISTS chunk_edges_kind ON chunk_edges (kind);

-- Per-chunk state of the incremental chunk-edge builders (ingest/edges): opaque JSON.
CREATE TABLE IF NOT EXISTS chunk_edge_state (
    chunk_id TEXT PRIMARY KEY,
    state TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS communities (
    id INTEGER PRIMARY KEY,
    level INTEGER NOT NULL,
    size INTEGER NOT NULL,
    top_tokens TEXT NOT NULL
);
