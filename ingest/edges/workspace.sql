-- The edge workspace (ingest/edges/workspace.py): one local SQLite file per collection.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    facts TEXT NOT NULL,  -- JSON: section path, tokens, links, questions, entities
    unit BLOB,            -- the embedding's quantised unit row, int32
    terms TEXT            -- JSON: question-term counts
);
CREATE INDEX chunks_doc ON chunks (doc_id);
