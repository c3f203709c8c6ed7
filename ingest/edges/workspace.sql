-- The edge workspace (ingest/edges/workspace.py): one local SQLite file per collection.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Each chunk's links as the names they may use for a document (ingest/edges/links.py).
CREATE TABLE links (option TEXT NOT NULL, chunk TEXT NOT NULL, PRIMARY KEY (option, chunk))
    WITHOUT ROWID;
CREATE INDEX links_by_chunk ON links (chunk);
