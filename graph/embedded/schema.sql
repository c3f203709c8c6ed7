-- The embedded backend's durable state. One SQLite file; every ingest batch is one
-- transaction, so a killed process leaves either the old or the new state of a batch.
--
-- Format 2: the tables that link chunks (has_token, mentions, chunk_edges,
-- chunk_edge_state) name a chunk by its integer `key`, not its text id, and an edge's kind
-- by a small code: a chunk id is a collection, a path and a hash (often over 100 bytes),
-- and format 1 repeated it in every link row and in every index over them (40 KB of a
-- 63 KB chunk at 10k scale-benchmark chunks). Row counts are kept by triggers, so a
-- status read costs the same at any size. graph/embedded/migrate.py brings a format-1
-- file forward in place.
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
    key INTEGER PRIMARY KEY,  -- explicit: VACUUM keeps it (an implicit rowid may change)
    id TEXT NOT NULL UNIQUE,
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
    chunk INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    PRIMARY KEY (chunk, token_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS has_token_by_token ON has_token (token_id);

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
    chunk INTEGER NOT NULL,
    entity_key TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (chunk, entity_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_by_entity ON mentions (entity_key);

CREATE TABLE IF NOT EXISTS edge_kinds (
    code INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO edge_kinds (code, name) VALUES
    (1, 'SEMANTIC'), (2, 'NEXT'), (3, 'SAME_SECTION'), (4, 'SHARES_ENTITY'),
    (5, 'CITES'), (6, 'UTILITY'), (7, 'RELATED');

CREATE TABLE IF NOT EXISTS chunk_edges (
    src INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    dst INTEGER NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (src, kind, dst)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_edges_by_dst ON chunk_edges (dst, kind);

-- Per-chunk state of the incremental chunk-edge builders (ingest/edges): opaque JSON.
CREATE TABLE IF NOT EXISTS chunk_edge_state (
    chunk INTEGER PRIMARY KEY,
    state TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS communities (
    id INTEGER PRIMARY KEY,
    level INTEGER NOT NULL,
    size INTEGER NOT NULL,
    top_tokens TEXT NOT NULL
);

-- Row counts, kept by the triggers below ('edges:<kind code>' per edge kind). Writes
-- update chunk edges and co-occurrences in place (upserts), which fire no insert trigger.
CREATE TABLE IF NOT EXISTS counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
INSERT OR IGNORE INTO counts (name, n) VALUES
    ('documents', 0), ('chunks', 0), ('tokens', 0), ('has_token', 0), ('cooccurs', 0),
    ('mentions', 0), ('communities', 0),
    ('edges:1', 0), ('edges:2', 0), ('edges:3', 0), ('edges:4', 0), ('edges:5', 0),
    ('edges:6', 0), ('edges:7', 0);

CREATE TRIGGER IF NOT EXISTS count_documents_in AFTER INSERT ON documents
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'documents'; END;
CREATE TRIGGER IF NOT EXISTS count_documents_out AFTER DELETE ON documents
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'documents'; END;
CREATE TRIGGER IF NOT EXISTS count_chunks_in AFTER INSERT ON chunks
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'chunks'; END;
CREATE TRIGGER IF NOT EXISTS count_chunks_out AFTER DELETE ON chunks
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'chunks'; END;
CREATE TRIGGER IF NOT EXISTS count_tokens_in AFTER INSERT ON tokens
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'tokens'; END;
CREATE TRIGGER IF NOT EXISTS count_tokens_out AFTER DELETE ON tokens
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'tokens'; END;
CREATE TRIGGER IF NOT EXISTS count_has_token_in AFTER INSERT ON has_token
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'has_token'; END;
CREATE TRIGGER IF NOT EXISTS count_has_token_out AFTER DELETE ON has_token
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'has_token'; END;
CREATE TRIGGER IF NOT EXISTS count_cooccurs_in AFTER INSERT ON cooccurs
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'cooccurs'; END;
CREATE TRIGGER IF NOT EXISTS count_cooccurs_out AFTER DELETE ON cooccurs
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'cooccurs'; END;
CREATE TRIGGER IF NOT EXISTS count_mentions_in AFTER INSERT ON mentions
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'mentions'; END;
CREATE TRIGGER IF NOT EXISTS count_mentions_out AFTER DELETE ON mentions
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'mentions'; END;
CREATE TRIGGER IF NOT EXISTS count_communities_in AFTER INSERT ON communities
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'communities'; END;
CREATE TRIGGER IF NOT EXISTS count_communities_out AFTER DELETE ON communities
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'communities'; END;
CREATE TRIGGER IF NOT EXISTS count_edges_in AFTER INSERT ON chunk_edges
BEGIN UPDATE counts SET n = n + 1 WHERE name = 'edges:' || NEW.kind; END;
CREATE TRIGGER IF NOT EXISTS count_edges_out AFTER DELETE ON chunk_edges
BEGIN UPDATE counts SET n = n - 1 WHERE name = 'edges:' || OLD.kind; END;


-- The store's identity, which copies kept outside it check (graph/kept.py); `clear` deletes
-- it with the rest of meta, and the next write or open sets a new one.
INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
